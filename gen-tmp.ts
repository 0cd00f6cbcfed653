import { generateCases } from './src/faults/explore-generate';
import { contractOf } from './src/faults/explore';
const cs = generateCases(Number(process.argv[2]), Number(process.argv[3]), contractOf);
cs.forEach((c, i) => console.log(i + 1, c.name, c.policy ? `ttl=${c.policy.approvalTtlMs}` : '', c.approver ? JSON.stringify(c.approver) : '', JSON.stringify(c.input['amount'] ?? c.input['amount2'] ?? '')));
