// Passkeys (WebAuthn) for the account page: the server's options (JSON, binary fields in base64url) become what
// navigator.credentials wants, and the browser's credential becomes JSON for the server, which verifies it. The
// page never sees a secret: the authenticator keeps the private key, the server answers a sign-in with the cookie.

/** The bytes of a base64url text. */
function fromB64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
}

/** Base64url (no padding) of an ArrayBuffer. */
function toB64url(buffer) {
  let text = "";
  for (const byte of new Uint8Array(buffer)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The credential as the JSON the server reads (WebAuthn's `toJSON` form). */
function credentialJson(credential) {
  const r = credential.response;
  const response = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toB64url(r.attestationObject);
    if (r.getTransports) response.transports = r.getTransports();
  } else {
    response.authenticatorData = toB64url(r.authenticatorData);
    response.signature = toB64url(r.signature);
    if (r.userHandle) response.userHandle = toB64url(r.userHandle);
  }
  const json = { id: credential.id, rawId: toB64url(credential.rawId), type: credential.type, response,
    clientExtensionResults: credential.getClientExtensionResults() };
  if (credential.authenticatorAttachment) json.authenticatorAttachment = credential.authenticatorAttachment;
  return json;
}

/** Whether this browser can use passkeys here (WebAuthn, in a secure context). */
export function passkeysAvailable() {
  return Boolean(window.PublicKeyCredential && navigator.credentials && window.isSecureContext);
}

/** One line for a browser's refusal (the player cancelled, timed out, or has no passkey for this site). */
function refusal(err) {
  if (err && err.name === "NotAllowedError") return "no passkey was used (cancelled, timed out, or none for this site)";
  if (err && err.name === "InvalidStateError") return "this passkey is already one of this account's";
  return err && err.message ? err.message : String(err);
}

/** Create a passkey for the signed-in account and store it; `post` sends an account request. */
export async function addPasskey(post) {
  const begun = await post("/account/passkey/add-options", {});
  const options = JSON.parse(begun.options);
  options.challenge = fromB64url(options.challenge);
  options.user.id = fromB64url(options.user.id);
  for (const c of options.excludeCredentials || []) c.id = fromB64url(c.id);
  let credential;
  try {
    credential = await navigator.credentials.create({ publicKey: options });
  } catch (err) {
    throw new Error(refusal(err));
  }
  return post("/account/passkey/add", { challenge_id: begun.challenge_id, credential: credentialJson(credential) });
}

/** Sign in with a passkey the authenticator holds for this site; the server's answer (as a password's sign-in). */
export async function signInWithPasskey(post) {
  const begun = await post("/account/passkey/sign-in-options", {});
  const options = JSON.parse(begun.options);
  options.challenge = fromB64url(options.challenge);
  for (const c of options.allowCredentials || []) c.id = fromB64url(c.id);
  let credential;
  try {
    credential = await navigator.credentials.get({ publicKey: options });
  } catch (err) {
    throw new Error(refusal(err));
  }
  return post("/account/passkey/sign-in", { challenge_id: begun.challenge_id, credential: credentialJson(credential) });
}
