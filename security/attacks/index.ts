/** Every attack group of `npm run security`, in the order they run. */
import type { AttackGroup } from '../attack';
import { capabilityAttacks } from './capabilities';
import { signerAttacks } from './capabilities-v2';
import { identityAttacks } from './identity';
import { readAttacks } from './reads';
import { serviceAttacks } from './services';
import { codecAttacks } from './codec';

export const ATTACK_GROUPS: readonly AttackGroup[] = [
  capabilityAttacks,
  signerAttacks,
  identityAttacks,
  serviceAttacks,
  readAttacks,
  codecAttacks,
];
