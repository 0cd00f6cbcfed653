/**
 * The first-hour check (lab/demo/tokens-in-clear.ts): a history whose start input carries a token as `json/plain`
 * is a finding; the same input encrypted is not; a token outside any payload is found in the raw bytes.
 */
import Long from 'long';
import { temporal } from '@temporalio/proto';
import { tokensInClear } from '../../lab/demo/tokens-in-clear';

const TOKEN = 'eyJhbGciOiJFZERTQSIsImtpZCI6ImRldiJ9.eyJzdWIiOiJ1c2VyOmFsaWNlIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
const enc = (s: string) => new TextEncoder().encode(s);
const started = (encoding: string, data: string): temporal.api.history.v1.IHistory => ({
  events: [
    {
      eventId: Long.fromNumber(1),
      eventType: temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      workflowExecutionStartedEventAttributes: {
        input: { payloads: [{ metadata: { encoding: enc(encoding) }, data: enc(data) }] },
      },
    },
  ],
});
const bytes = (h: temporal.api.history.v1.IHistory) => temporal.api.history.v1.History.encode(h).finish();

test('a start input that carries a token as json/plain is a finding; encrypted, it is not', () => {
  const clear = started('json/plain', JSON.stringify({ identityToken: TOKEN }));
  expect(tokensInClear(clear, bytes(clear)).findings).toEqual([
    { where: expect.stringMatching(/^event 1 /), encoding: 'json/plain' },
  ]);
  // The control: the same event, its payload encrypted (opaque bytes), holds nothing readable.
  const sealed = started('binary/encrypted', 'r4nd0m-c1ph3rt3xt');
  const report = tokensInClear(sealed, bytes(sealed));
  expect(report.findings).toEqual([]);
  expect(report.payloads).toEqual({ 'binary/encrypted': 1 });
});

test('a token outside any payload still shows in the history’s bytes', () => {
  const h: temporal.api.history.v1.IHistory = {
    events: [
      {
        eventId: Long.fromNumber(1),
        eventType: temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
        workflowExecutionStartedEventAttributes: { identity: TOKEN },
      },
    ],
  };
  expect(tokensInClear(h, bytes(h)).findings).toEqual([{ where: 'history', encoding: '(outside a payload)' }]);
  expect(tokensInClear(h).findings).toEqual([]); // without the bytes only payloads are read
});
