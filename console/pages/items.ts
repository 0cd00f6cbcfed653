/**
 * One inbox item as a card: what the call is (tool, amount, principal), how long it has waited and when it stops
 * being actionable, and the actions offered, each a form whose submit the script sends with the CSRF token. Big
 * tap targets, one column on a phone: an approver decides on one screen.
 */
import type { InboxItem } from '../inbox';
import { age, html, runHref, str, ttlLabel, until, type Html } from './layout';

const KIND_LABEL = { approval: 'Approval', unknown: 'UNKNOWN call', abandoned: 'Left standing' } as const;

function hidden(item: InboxItem): Html {
  return str(
    html`<input type="hidden" name="logicalCallId" value="${item.logicalCallId}" />
      <input type="hidden" name="runId" value="${item.runId}" />
      ${item.argumentsHash ? html`<input type="hidden" name="argumentsHash" value="${item.argumentsHash}" />` : ''}
      ${item.policyVersion ? html`<input type="hidden" name="policyVersion" value="${item.policyVersion}" />` : ''}`,
  );
}

export function approvalForm(item: InboxItem, ttls: readonly number[], defaultTtl?: number): Html {
  return str(
    html`<form class="action" data-workflow="${item.workflowId}">
      ${hidden(item)}
      <label>Reason <textarea name="reason" required maxlength="2000" rows="2" placeholder="why"></textarea></label>
      <label
        >Valid for
        <select name="ttlMs">
          ${ttls.map((t) => html`<option value="${t}" ${t === defaultTtl ? 'selected' : ''}>${ttlLabel(t)}</option>`)}
        </select>
      </label>
      <div class="buttons">
        <button type="submit" name="action" value="approve" class="approve">Approve</button>
        <button type="submit" name="action" value="deny" class="deny">Deny</button>
      </div>
    </form>`,
  );
}

export function resolveForm(item: InboxItem): Html {
  return str(
    html`<form class="action" data-workflow="${item.workflowId}">
      ${hidden(item)}
      <label
        >Outcome
        <select name="outcome">
          <option value="SUCCEEDED">SUCCEEDED (the effect exists)</option>
          <option value="FAILED">FAILED (no effect)</option>
        </select>
      </label>
      <label
        >Receipt <input name="receipt" maxlength="200" placeholder="the downstream's receipt, for SUCCEEDED"
      /></label>
      <label
        >Reason
        <textarea name="reason" required maxlength="2000" rows="2" placeholder="the evidence you used"></textarea>
      </label>
      <div class="buttons">
        <button type="submit" name="action" value="resolve">Resolve</button>
        <button type="submit" name="action" value="lookup" formnovalidate>Look it up now</button>
      </div>
    </form>`,
  );
}

export function settleForm(item: InboxItem): Html {
  return str(
    html`<form class="action" data-workflow="${item.workflowId}">
      ${hidden(item)}
      <label
        >Reason <textarea name="reason" required maxlength="2000" rows="2" placeholder="why you settle it"></textarea>
      </label>
      <div class="buttons">
        <button type="submit" name="action" value="settle">Settle (look up, then compensate)</button>
        <button type="submit" name="action" value="lookup" formnovalidate>Look it up now</button>
      </div>
    </form>`,
  );
}

export function itemCard(item: InboxItem, nowMs: number, ttls: readonly number[], defaultTtl?: number): Html {
  const actions = item.actions;
  const form =
    item.kind === 'approval' && actions.includes('approve')
      ? approvalForm(item, ttls, defaultTtl)
      : item.kind === 'unknown' && actions.includes('resolve')
        ? resolveForm(item)
        : item.kind === 'abandoned' && actions.includes('settle')
          ? settleForm(item)
          : str(html`<p class="no-action">You may view this; no action is offered to your roles.</p>`);
  return str(
    html`<article class="item item-${item.kind}" data-key="${item.key}" data-testid="item">
      <header>
        <span class="kind">${KIND_LABEL[item.kind]}</span>
        <strong class="summary">${item.summary}</strong>
      </header>
      <dl>
        <dt>Tool</dt>
        <dd>${item.tool}</dd>
        <dt>Amount</dt>
        <dd class="amount">${item.amount ?? '—'}</dd>
        <dt>Principal</dt>
        <dd>${item.principal}</dd>
        <dt>Waiting</dt>
        <dd><time datetime="${item.since}">${age(item.since, nowMs)}</time></dd>
        <dt>${item.kind === 'approval' ? 'Decide by' : 'Run deadline'}</dt>
        <dd>
          ${item.expiresAt ? html`<time datetime="${item.expiresAt}">${until(item.expiresAt, nowMs)}</time> <small>(the run’s deadline)</small>` : item.closedAs ? `run ${item.closedAs}` : '—'}
        </dd>
        <dt>Run</dt>
        <dd><a href="${runHref(item.workflowId, item.runId)}">${item.workflowId}</a> · ${item.logicalCallId}</dd>
        ${
          item.state
            ? html`<dt>State</dt>
                <dd>${item.state}</dd>`
            : ''
        }
      </dl>
      ${item.note ? html`<p class="note">${item.note}</p>` : ''} ${form}
      <p class="result" role="status" aria-live="polite"></p>
    </article>`,
  );
}
