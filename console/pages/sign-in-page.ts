/**
 * Sign-in: paste an identity token of an issuer this console (and its workers) trust. The form posts to
 * /sign-in with its CSRF value, whose other half is an HttpOnly pre-session cookie; the token travels in the POST
 * body, never in a URL. The demo prints one-click links instead (a one-time code, exchanged server-side).
 */
import { html, layout, str, type Html } from './layout';

export function signInPage(o: { readonly csrf: string; readonly problem?: { type: string; message: string } }): Html {
  return layout({
    title: 'Sign in',
    body: str(
      html`<section class="sign-in">
        <h1>Sign in</h1>
        ${o.problem ? html`<p class="refusal" data-testid="refusal"><code>${o.problem.type}</code> ${o.problem.message}</p>` : ''}
        <form method="post" action="/sign-in" data-plain="true">
          <input type="hidden" name="csrf" value="${o.csrf}" />
          <label
            >Identity token (a compact JWS from your issuer)
            <textarea name="token" required rows="5" autocomplete="off" spellcheck="false"></textarea>
          </label>
          <div class="buttons"><button type="submit">Sign in</button></div>
        </form>
        <p class="hint">
          The console keeps the token on the server for your session and acts with it on your behalf: every approval,
          resolution and cancel is verified by the run and recorded with who you are.
        </p>
      </section>`,
    ),
  });
}
