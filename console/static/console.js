/* The console's one script: live inbox (server-sent events), sorting, and action forms sent with the session's
 * CSRF token. It renders nothing itself: the server sends escaped HTML for each item, keyed, and an item whose form
 * the person is filling in is kept as it is until they are done. */
/* global document, window, EventSource, HTMLFormElement */
'use strict';
(function () {
  var csrfMeta = document.querySelector('meta[name="csrf-token"]');
  var csrf = csrfMeta ? csrfMeta.getAttribute('content') : '';

  // An item the person is working on (a field in focus or filled, a result shown) is not re-rendered; once it
  // left the server's list it goes, unless an action on it is still on its way or it shows a refusal the person
  // has yet to read. A confirmation stays 5 s from the moment it is shown, not from the click.
  function editing(slot) {
    var active = document.activeElement;
    if (active && slot.contains(active) && active.tagName !== 'BUTTON') return true;
    var fields = slot.querySelectorAll('textarea, input[name="receipt"]');
    for (var i = 0; i < fields.length; i++) if (fields[i].value) return true;
    return false;
  }
  function keepWhileChanged(slot) {
    return editing(slot) || slot.querySelector('.result.shown') !== null;
  }
  function keepWhileGone(slot) {
    // An action still on its way: its answer, whatever it says, must have a place to show.
    if (slot.querySelector('.result.pending') !== null) return true;
    var done = slot.querySelector('.result.ok.shown');
    if (done) return Date.now() - Number(done.getAttribute('data-at') || 0) < 5000; // the confirmation stays 5 s
    return editing(slot) || slot.querySelector('.result.refused') !== null;
  }

  var latest;
  function renderInbox(data) {
    latest = data;
    var list = document.getElementById('items');
    if (!list) return;
    var existing = {};
    Array.prototype.forEach.call(list.children, function (el) {
      existing[el.getAttribute('data-key')] = el;
    });
    var keep = {};
    data.items.forEach(function (item) {
      var slot = existing[item.key];
      if (!slot) {
        slot = document.createElement('div');
        slot.className = 'slot';
        slot.setAttribute('data-key', item.key);
      }
      if (slot.getAttribute('data-html') !== item.html && !(slot.firstChild && keepWhileChanged(slot))) {
        var t = document.createElement('template');
        t.innerHTML = item.html;
        slot.replaceChildren(t.content);
        slot.setAttribute('data-html', item.html);
      }
      keep[item.key] = true;
      list.appendChild(slot); // in the server's order
    });
    var later = false;
    Object.keys(existing).forEach(function (k) {
      if (keep[k]) return;
      if (!keepWhileGone(existing[k])) existing[k].remove();
      else later = true;
    });
    // A confirmation kept for its 5 s: look again once it has been read.
    if (later)
      window.setTimeout(function () {
        renderInbox(latest);
      }, 5100);
    var count = document.querySelector('[data-testid="count"]');
    if (count) count.textContent = String(data.count);
    var empty = document.querySelector('.empty');
    if (empty) empty.hidden = data.count > 0;
    var problems = document.querySelector('.problems');
    if (problems) {
      problems.replaceChildren();
      data.problems.forEach(function (p) {
        var li = document.createElement('li');
        li.textContent = p;
        problems.appendChild(li);
      });
    }
  }

  var stream;
  function openStream(sort) {
    if (!document.getElementById('items') || typeof EventSource === 'undefined') return;
    if (stream) stream.close();
    stream = new EventSource('/api/inbox/stream?sort=' + encodeURIComponent(sort));
    var live = document.querySelector('[data-testid="live"]');
    stream.addEventListener('inbox', function (ev) {
      renderInbox(JSON.parse(ev.data));
      if (live) live.setAttribute('data-at', JSON.parse(ev.data).at);
    });
    stream.onerror = function () {
      if (live) live.classList.add('offline');
    };
    stream.onopen = function () {
      if (live) live.classList.remove('offline');
    };
  }

  // state: 'ok' (a confirmation), 'refused' (a typed refusal) or 'pending' (the action is on its way).
  var TEST_IDS = { ok: 'done', refused: 'refusal', pending: 'pending-action' };
  function show(result, state, text, type) {
    if (!result) return;
    result.replaceChildren();
    if (type) {
      var code = document.createElement('code');
      code.textContent = type;
      result.appendChild(code);
      result.appendChild(document.createTextNode(' '));
    }
    result.appendChild(document.createTextNode(text));
    result.className = 'result shown ' + state;
    result.setAttribute('data-at', String(Date.now()));
    result.setAttribute('data-testid', TEST_IDS[state]);
  }

  function payload(form, action) {
    var data = new FormData(form);
    var out = {};
    data.forEach(function (v, k) {
      if (k !== 'action' && v !== '') out[k] = v;
    });
    if (out.ttlMs) out.ttlMs = Number(out.ttlMs);
    var fields = {
      approve: ['logicalCallId', 'argumentsHash', 'policyVersion', 'reason', 'ttlMs'],
      deny: ['logicalCallId', 'argumentsHash', 'policyVersion', 'reason'],
      resolve: ['logicalCallId', 'outcome', 'receipt', 'reason'],
      cancel: ['reason'],
      lookup: ['runId', 'logicalCallId'],
      settle: ['runId', 'logicalCallId', 'reason'],
    }[action];
    var body = {};
    (fields || []).forEach(function (k) {
      if (out[k] !== undefined) body[k] = out[k];
    });
    return body;
  }

  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains('action')) return;
    ev.preventDefault();
    var action = ev.submitter ? ev.submitter.value : '';
    var result = form.parentElement.querySelector('.result');
    var buttons = form.querySelectorAll('button');
    buttons.forEach(function (b) {
      b.disabled = true;
    });
    show(result, 'pending', action + '…');
    fetch('/api/runs/' + encodeURIComponent(form.getAttribute('data-workflow')) + '/' + action, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf },
      body: JSON.stringify(payload(form, action)),
    })
      .then(function (r) {
        return r.json();
      })
      .then(function (out) {
        if (out.ok) show(result, 'ok', out.message);
        else show(result, 'refused', out.message, out.type);
      })
      .catch(function (err) {
        show(result, 'refused', String(err), 'Console.Unreachable');
      })
      .finally(function () {
        buttons.forEach(function (b) {
          b.disabled = false;
        });
      });
  });

  var sort = document.querySelector('select[name="sort"]');
  if (sort) {
    sort.addEventListener('change', function () {
      window.history.replaceState(null, '', '/?sort=' + sort.value);
      openStream(sort.value);
    });
    openStream(sort.value);
  }

  var run = document.querySelector('section.run');
  if (run) {
    var liveUrl =
      '/api/runs/' +
      encodeURIComponent(run.getAttribute('data-workflow')) +
      '/live?run=' +
      encodeURIComponent(run.getAttribute('data-run'));
    var poll = function () {
      fetch(liveUrl, { credentials: 'same-origin' })
        .then(function (r) {
          return r.json();
        })
        .then(function (out) {
          var live = document.getElementById('live');
          if (out.ok && live && live.getAttribute('data-html') !== out.html) {
            var t = document.createElement('template');
            t.innerHTML = out.html;
            live.replaceChildren(t.content);
            live.setAttribute('data-html', out.html);
          }
        })
        .catch(function () {})
        .finally(function () {
          window.setTimeout(poll, 2000);
        });
    };
    window.setTimeout(poll, 2000);
  }
})();
