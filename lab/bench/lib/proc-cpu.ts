/** CPU time of other processes of the stack (dev server, wallet), read from /proc: Linux only, else NaN. */
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces: split after its closing parenthesis.
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** utime + stime in ms of one process (threads included). */
export function processCpuMs(pid: number): number {
  const f = statFields(pid);
  if (!f) return NaN;
  // After the name: state(0) ppid(1) pgrp(2) ... utime(11) stime(12)
  return ((Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND) * 1000;
}

/** Sum over every live process whose process group is `pgid` (the dev server runs in a group of its own). */
export function groupCpuMs(pgid: number): number {
  let total = 0;
  let found = false;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return NaN;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const f = statFields(Number(e));
    if (!f || Number(f[2]) !== pgid) continue;
    found = true;
    total += ((Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND) * 1000;
  }
  return found ? total : NaN;
}

/** A process and its direct children (PostgreSQL's postmaster and its backends), from /proc; NaN if it is gone. */
export function treeCpuMs(rootPid: number): number {
  const own = processCpuMs(rootPid);
  if (Number.isNaN(own)) return NaN;
  let total = own;
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const f = statFields(Number(e));
    if (f && Number(f[1]) === rootPid) total += ((Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND) * 1000;
  }
  return total;
}
