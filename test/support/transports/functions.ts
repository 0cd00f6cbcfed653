/** The function tools' implementations over the fake APIs, as a team would write them over an SDK. */
import {
  found,
  implementTool,
  notFound,
  NothingSentError,
  type ToolImplementation,
} from '../../../src/downstream/function-tool';
import type { FakeLedgerApi, FakeMailApi } from './fake-apis';
import { ledgerPost, mailSend } from './tools';

export function ledgerAndMailFunctions(ledger: FakeLedgerApi, mail: FakeMailApi): ToolImplementation[] {
  return [
    implementTool(ledgerPost, {
      async execute(args, ctx) {
        if (args.account === 'closed') throw new NothingSentError('Ledger.AccountClosed', 'the account is closed');
        const { posting } = await ledger.post(args, {
          idempotencyKey: ctx.operationKey,
          apiKey: ctx.secrets['LEDGER_API_KEY'] ?? '',
          signal: ctx.signal,
        });
        return posting;
      },
      async lookup(key) {
        const posting = await ledger.find(key);
        return posting ? found(posting) : notFound();
      },
    }),
    implementTool(mailSend, {
      execute: (args, ctx) => mail.send(args, ctx.operationKey, ctx.signal),
      async lookup(key) {
        const message = await mail.find(key);
        return message ? found(message) : notFound();
      },
    }),
  ];
}
