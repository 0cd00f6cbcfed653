/**
 * The run page: status and a link to the same run in the Temporal UI; the calls that wait (with their actions);
 * every call with its operation key, arguments hash, receipt, capability and lookup evidence, and whether a stop
 * left it standing; the ledger as a timeline; the update requests the history recorded (never their tokens).
 * The `#live` part is re-rendered every 2 s by the script while the page is open.
 */
import type { InboxItem } from '../inbox';
import type { Abilities } from '../roles';
import type { RunPage } from '../run-model';
import { approvalForm, resolveForm, settleForm } from './items';
import { html, str, type Html } from './layout';

function formItem(
  p: RunPage,
  over: Partial<InboxItem> & Pick<InboxItem, 'kind' | 'logicalCallId' | 'tool'>,
): InboxItem {
  return {
    key: '',
    workflowId: p.workflowId,
    runId: p.runId,
    summary: '',
    principal: p.principal,
    since: '',
    actions: [],
    ...over,
  };
}

export function liveHtml(p: RunPage): Html {
  return str(
    html`<p class="status">
        Status
        <strong data-testid="run-status">${p.ledger?.projection.status ?? p.status.toLowerCase()}</strong>
        ${p.ledger?.projection.stopReason ? html` · stop <strong data-testid="stop-reason">${p.ledger.projection.stopReason}</strong>` : ''}
        · execution ${p.status}
      </p>
      ${p.ledgerProblem ? html`<p class="refusal">${p.ledgerProblem}</p>` : ''}
      <h2>Calls</h2>
      <div class="table">
        <table data-testid="calls">
          <thead>
            <tr>
              <th>call</th>
              <th>tool</th>
              <th>state</th>
              <th>operation key</th>
              <th>arguments hash</th>
              <th>receipt</th>
              <th>evidence</th>
              <th>at a stop</th>
            </tr>
          </thead>
          <tbody>
            ${p.calls.map(
              (r) =>
                html`<tr data-call="${r.call.logicalCallId}">
                  <td>${r.call.logicalCallId}</td>
                  <td>${r.call.toolName}</td>
                  <td class="state state-${r.call.state}">${r.call.state}</td>
                  <td><code>${r.call.operationKey ?? '—'}</code></td>
                  <td><code>${r.call.argumentsHash?.slice(0, 16) ?? '—'}</code></td>
                  <td>${r.call.receipt ?? '—'}</td>
                  <td>
                    ${r.evidence ?? ''}${r.capability ? html`<br /><small>capability ${r.capability}</small>` : ''}${r.call.approvedBy ? html`<br /><small>approved by ${r.call.approvedBy}</small>` : ''}
                  </td>
                  <td>${r.standingAtStop ? 'left standing' : (r.call.compensation ?? '')}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <h2>Timeline</h2>
      <ol class="timeline" data-testid="timeline">
        ${p.rows.map(
          (r) =>
            html`<li class="phase-${r.phase}" data-type="${r.type}">
              <span class="seq">${r.seq}</span> <time datetime="${r.at}">${r.at.slice(11, 23)}</time>
              <span class="phase">${r.phase}</span>
              <span class="type">${r.type}</span> ${r.callId ? html`<span class="call">${r.callId}</span>` : ''}
              <span class="text">${r.text}</span>
            </li>`,
        )}
      </ol>`,
  );
}

export function runPage(
  p: RunPage,
  a: Abilities,
  isOwnRun: boolean,
  ttls: readonly number[],
  defaultTtl?: number,
): Html {
  const unknown = p.calls.filter((r) => r.call.state === 'UNKNOWN');
  const mayCancel = p.open && (a.cancel || isOwnRun);
  return str(
    html`<section
      class="run"
      data-workflow="${p.workflowId}"
      data-run="${p.runId}"
      data-open="${p.open ? 'true' : 'false'}"
    >
      <h1>Run <code>${p.workflowId}</code></h1>
      <p class="facts">
        ${p.principal} · ${p.tenant} · task queue ${p.taskQueue} · started
        ${p.startTime}${p.closeTime ? ` · closed ${p.closeTime}` : ''}
        ${p.uiLink ? html` · <a href="${p.uiLink}" target="_blank" rel="noopener noreferrer" data-testid="temporal-ui">open in the Temporal UI</a>` : ''}
      </p>
      ${p.pending.length || unknown.length || p.standing.length ? html`<h2>Waiting for a person</h2>` : ''}
      ${p.pending.map(
        (x) =>
          html`<article class="item item-approval" data-testid="pending">
            <header><span class="kind">Approval</span> <strong class="summary">${x.summary}</strong></header>
            <p>
              ${x.logicalCallId} · ${x.reason} · policy ${x.policyVersion} · arguments ${x.argumentsHash.slice(0, 16)}…
            </p>
            ${a.approve ? approvalForm(formItem(p, { kind: 'approval', logicalCallId: x.logicalCallId, tool: x.toolName, argumentsHash: x.argumentsHash, policyVersion: x.policyVersion }), ttls, defaultTtl) : html`<p class="no-action">No action is offered to your roles.</p>`}
            <p class="result" role="status" aria-live="polite"></p>
          </article>`,
      )}
      ${
        p.open
          ? unknown.map(
              (r) =>
                html`<article class="item item-unknown" data-testid="unknown">
                  <header>
                    <span class="kind">UNKNOWN call</span>
                    <strong class="summary">${r.call.toolName} ${r.call.logicalCallId}</strong>
                  </header>
                  <p>key <code>${r.call.operationKey ?? '—'}</code></p>
                  ${a.operate ? resolveForm(formItem(p, { kind: 'unknown', logicalCallId: r.call.logicalCallId, tool: r.call.toolName })) : html`<p class="no-action">No action is offered to your roles.</p>`}
                  <p class="result" role="status" aria-live="polite"></p>
                </article>`,
            )
          : ''
      }
      ${p.standing.map(
        (s) =>
          html`<article class="item item-abandoned" data-testid="standing">
            <header>
              <span class="kind">Left standing (${s.effect.state})</span>
              <strong class="summary">${s.effect.intent.toolName} ${s.effect.intent.logicalCallId}</strong>
            </header>
            <p>
              key
              <code>${s.effect.intent.operationKey}</code
              >${s.effect.receipt ? ` · receipt ${s.effect.receipt}` : ''}${s.note ? html` · <span class="note">${s.note}</span>` : ''}
            </p>
            ${a.operate && !s.settled ? settleForm(formItem(p, { kind: 'abandoned', logicalCallId: s.effect.intent.logicalCallId, tool: s.effect.intent.toolName })) : ''}
            <p class="result" role="status" aria-live="polite"></p>
          </article>`,
      )}
      ${
        mayCancel
          ? html`<details class="cancel">
              <summary>Cancel this run</summary>
              <form class="action" data-workflow="${p.workflowId}">
                <input type="hidden" name="runId" value="${p.runId}" />
                <label>Reason <textarea name="reason" required maxlength="2000" rows="2"></textarea></label>
                <div class="buttons">
                  <button type="submit" name="action" value="cancel" class="deny">Cancel the run</button>
                </div>
              </form>
              <p class="result" role="status" aria-live="polite"></p>
            </details>`
          : ''
      }
      <div id="live" data-testid="live-run">${liveHtml(p)}</div>
      <h2>Requests the history recorded</h2>
      <ul class="requests">
        ${p.requests.map(
          (r) =>
            html`<li>
              <code>${r.name}</code> ${Object.entries(r.fields)
                .map(([k, v]) => `${k}=${v}`)
                .join(' · ')}
            </li>`,
        )}
      </ul>
    </section>`,
  );
}
