// /account: register, sign in (with the password, a passkey or a recovery code), sign out, the account's sessions
// (each one revocable), its passkeys (add, remove: passkeys.js speaks WebAuthn) and a new password. Signing in goes
// through POST /account/... so that the session's secret lands in an HttpOnly cookie this script never sees; the sessions and the password are asked over the websocket the
// cookie signs in. A session ended elsewhere comes back as `bad_session`: the page shows it is signed out.

import { Link } from "./net.js";
import { addPasskey, passkeysAvailable, signInWithPasskey } from "./passkeys.js";
import { el, showIdentity, showLinkState } from "./ui.js";

const $ = (id) => document.getElementById(id);
const st = { changing: false };

const net = new Link({
  onReady() {
    showIdentity(net.guest);
    show();
  },
  onMessage(msg) {
    if (msg.type === "session_list") drawSessions(msg.sessions || []);
    else if (msg.type === "signed_out" && !msg.current) {
      const ended = msg.ended === 1 ? "1 other session ended" : `${msg.ended} other sessions ended`;
      $("status").textContent = st.changing ? `Password changed; ${ended}.` : `${ended}.`;
      st.changing = false;
      net.send({ type: "sessions" });
    } else if (msg.type === "error" && msg.code === "bad_session") {
      $("status").textContent = "This session was ended: you are signed out.";
      show();
    } else if (msg.type === "error" && msg.request === "change_password") {
      st.changing = false;
      $("password-error").textContent = msg.message;
    }
    else if (msg.type === "error" && msg.request === "revoke") $("status").textContent = msg.message;
  },
  onState: showLinkState,
});

/** Show the signed-in or the signed-out part of the page. */
function show() {
  const account = net.account;
  $("signed-in").hidden = !account;
  $("signed-out").hidden = Boolean(account);
  if (account) {
    $("account-name").textContent = account.name;
    net.send({ type: "sessions" });
    listPasskeys();
  } else if (net.guest && !$("register-name").value) {
    $("register-name").value = net.guest.name;
  }
}

/** The account's sessions, each with a button that ends it. */
function drawSessions(sessions) {
  const body = $("sessions");
  body.replaceChildren();
  for (const s of sessions) {
    const row = el("tr");
    const where = s.client === "browser" ? "a browser" : "a terminal";
    row.append(el("td", null, s.current ? `${where} (this one)` : where), el("td", null, s.address),
      el("td", null, new Date(s.created_at * 1000).toLocaleString()),
      el("td", null, new Date(s.seen_at * 1000).toLocaleString()));
    const button = el("button", null, "Revoke");
    button.type = "button";
    button.setAttribute("aria-label", `Revoke the session of ${where} from ${s.address}${s.current ? " (this one)" : ""}`);
    button.dataset.session = s.session_id;
    button.addEventListener("click", () => {
      if (s.current) signOut();
      else net.send({ type: "revoke", session_id: s.session_id });
    });
    const action = el("td");
    action.append(button);
    row.append(action);
    body.append(row);
  }
}

/** The account's passkeys, each with a button that removes it. */
async function listPasskeys() {
  let answer;
  try {
    answer = await post("/account/passkey/list", {});
  } catch (err) {
    $("passkey-error").textContent = err.message;
    return;
  }
  const body = $("passkeys");
  body.replaceChildren();
  $("passkeys-none").hidden = answer.passkeys.length > 0;
  for (const [index, p] of answer.passkeys.entries()) {
    const added = new Date(p.created_at * 1000).toLocaleString();
    const row = el("tr");
    row.append(el("td", null, added), el("td", null, p.used_at ? new Date(p.used_at * 1000).toLocaleString() : "never"));
    const button = el("button", null, "Remove");
    button.type = "button";
    button.setAttribute("aria-label", `Remove passkey ${index + 1}, added ${added}`);
    button.addEventListener("click", async () => {
      $("passkey-error").textContent = "";
      try {
        await post("/account/passkey/remove", { passkey_id: p.passkey_id });
        $("status").textContent = "Passkey removed.";
      } catch (err) {
        $("passkey-error").textContent = err.message;
      }
      listPasskeys();
    });
    const action = el("td");
    action.append(button);
    row.append(action);
    body.append(row);
  }
}

/** POST an account request with its fields in the `Kalah-Account` header (base64 of JSON); its JSON answer. */
async function post(path, fields) {
  const json = JSON.stringify(fields);
  const header = btoa(String.fromCharCode(...new TextEncoder().encode(json)));
  const response = await fetch(path, { method: "POST", credentials: "same-origin", cache: "no-store",
    headers: { "Kalah-Account": header } });
  const answer = await response.json().catch(() => ({ message: `the server answered ${response.status}` }));
  if (!response.ok || answer.ok !== true) throw new Error(answer.message || `the server answered ${response.status}`);
  return answer;
}

/** After a sign-in: the page's connection says hello as the account. */
function signedIn(answer) {
  net.account = { name: answer.name, player_id: answer.player_id, session_id: answer.session_id };
  for (const id of ["signin-password", "register-password", "recover-password", "recover-code"]) $(id).value = "";
  net.reconnect();
}

function onSubmit(form, errorId, work) {
  $(form).addEventListener("submit", async (e) => {
    e.preventDefault();
    $(errorId).textContent = "";
    try {
      await work();
    } catch (err) {
      $(errorId).textContent = err.message;
    }
  });
}

onSubmit("signin", "signin-error", async () => {
  signedIn(await post("/account/login", { name: $("signin-name").value, password: $("signin-password").value }));
  $("status").textContent = "Signed in.";
});

onSubmit("register", "register-error", async () => {
  const name = $("register-name").value;
  const fields = { name, password: $("register-password").value };
  if (net.guest && net.guest.token && net.guest.name.toLowerCase() === name.toLowerCase()) fields.token = net.guest.token;
  const answer = await post("/account/register", fields);
  const list = $("codes-list");
  list.replaceChildren(...answer.recovery_codes.map((code) => el("li", null, code)));
  $("codes").hidden = false;
  signedIn(answer);
  $("status").textContent = `Registered ${answer.name}.`;
});

onSubmit("recover", "recover-error", async () => {
  signedIn(await post("/account/recover", { name: $("recover-name").value, code: $("recover-code").value.trim(),
    new_password: $("recover-password").value }));
  $("status").textContent = "Signed in with the recovery code; your other sessions were ended.";
});

onSubmit("password", "password-error", async () => {
  st.changing = true;
  net.send({ type: "change_password", old_password: $("password-old").value, new_password: $("password-new").value });
  $("password-old").value = "";
  $("password-new").value = "";
});

$("passkey-add").addEventListener("click", async () => {
  $("passkey-error").textContent = "";
  try {
    await addPasskey(post);
    $("status").textContent = "Passkey added: it signs you in from now on.";
  } catch (err) {
    $("passkey-error").textContent = err.message;
  }
  listPasskeys();
});

$("passkey-signin").addEventListener("click", async () => {
  $("passkey-signin-error").textContent = "";
  try {
    signedIn(await signInWithPasskey(post));
    $("status").textContent = "Signed in with a passkey.";
  } catch (err) {
    $("passkey-signin-error").textContent = err.message;
  }
});

if (!passkeysAvailable()) {
  const why = "Passkeys need a browser that has them, on an https page (or localhost).";
  for (const id of ["passkey-add", "passkey-signin"]) $(id).disabled = true;
  $("passkey-signin-error").textContent = why;
  $("passkey-error").textContent = why;
}

async function signOut() {
  await fetch("/account/logout", { method: "POST", credentials: "same-origin", cache: "no-store" });
  net.account = null;
  $("status").textContent = "Signed out.";
  net.reconnect();
}

$("signout").addEventListener("click", signOut);
$("signout-all").addEventListener("click", () => {
  net.send({ type: "revoke", all: true });
  net.account = null;
  $("status").textContent = "Signed out everywhere.";
});

net.start();
