/**
 * host/worker/search-attributes.ts against a fake operator service: missing attributes are added and awaited; a
 * refused add, or an attribute of another type, refuses the start with `Config.SearchAttributesMissing` naming the
 * command that registers them.
 */
import { registerSearchAttributes, SearchAttributesMissing } from '../../host/worker/search-attributes';
import { SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { INDEXED_VALUE_TYPE } from '../../host/server/dev-server';

const denied = () => Object.assign(new Error('7 PERMISSION_DENIED: Request unauthorized.'), { code: 7 });

function operator(opts: { refuseAdd?: boolean; refuseList?: boolean; registered?: Record<string, number> } = {}) {
  const custom: Record<string, number> = { ...opts.registered };
  const added: string[] = [];
  return {
    added,
    listSearchAttributes: async () => {
      if (opts.refuseList) throw denied();
      return { customAttributes: { ...custom } };
    },
    addSearchAttributes: async (req: { searchAttributes?: Record<string, number> | null }) => {
      if (opts.refuseAdd) throw denied();
      for (const [name, type] of Object.entries(req.searchAttributes ?? {})) {
        custom[name] = type;
        added.push(name);
      }
      return {};
    },
  };
}

const all = Object.fromEntries(SEARCH_ATTRIBUTES.map((sa) => [sa.name, INDEXED_VALUE_TYPE[sa.type]]));

test('a namespace without the attributes gets all of them, and one that has them is left alone', async () => {
  const fresh = operator();
  await expect(registerSearchAttributes(fresh as never, 'fresh')).resolves.toBe('registered');
  expect(fresh.added.sort()).toEqual(SEARCH_ATTRIBUTES.map((s) => s.name).sort());
  const ready = operator({ registered: all });
  await expect(registerSearchAttributes(ready as never, 'ready')).resolves.toBe('present');
  expect(ready.added).toEqual([]);
});

test('an operator service that refuses the add refuses the start, naming the command that registers them', async () => {
  const refused = registerSearchAttributes(operator({ refuseAdd: true }) as never, 'cloud-ns');
  await expect(refused).rejects.toThrow(SearchAttributesMissing);
  await expect(refused).rejects.toThrow(
    'temporal operator search-attribute create --namespace cloud-ns --name LedgerloopStatus --type Keyword',
  );
  await expect(refused).rejects.toThrow('PERMISSION_DENIED');
});

test('an attribute registered with another type refuses the start, and nothing is added', async () => {
  const wrong = operator({ registered: { ...all, LedgerloopUnknownCalls: INDEXED_VALUE_TYPE.Keyword } });
  await expect(registerSearchAttributes(wrong as never, 'ns')).rejects.toThrow(
    /LedgerloopUnknownCalls \(registered with another type\)/,
  );
  expect(wrong.added).toEqual([]);
});

test('a connection that may not list them (a worker role) is left as it was and says so; any other error throws', async () => {
  const workerRole = operator({ refuseList: true });
  await expect(registerSearchAttributes(workerRole as never, 'ns')).resolves.toBe('unreadable');
  expect(workerRole.added).toEqual([]);
  const broken = { ...operator(), listSearchAttributes: async () => Promise.reject(new Error('14 UNAVAILABLE')) };
  await expect(registerSearchAttributes(broken as never, 'ns')).rejects.toThrow('UNAVAILABLE');
});
