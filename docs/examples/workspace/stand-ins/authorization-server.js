// A stand-in OAuth authorization server for the book's workspace examples: OpenID Connect
// discovery metadata and a JWKS of one RSA key, and, in place of a real sign-in, `GET
// /token?sub=<subject>&aud=<audience>` answering an RS256 access token for that subject (valid
// for an hour). Prints its issuer URL on the first line of standard output.
"use strict";

const crypto = require("node:crypto");
const http = require("node:http");

const { publicKey, privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const KID = "stand-in-1";
const base64url = (data) => Buffer.from(data).toString("base64url");

function token(issuer, sub, aud) {
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT", kid: KID }));
  const claims = base64url(JSON.stringify({ iss: issuer, sub, aud, iat: now, exp: now + 3600 }));
  const signature = crypto.sign("sha256", Buffer.from(`${header}.${claims}`), privateKey);
  return `${header}.${claims}.${base64url(signature)}`;
}

const server = http.createServer((req, res) => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const url = new URL(req.url, issuer);
  const json = (value) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(value));
  };
  if (url.pathname === "/.well-known/openid-configuration") {
    json({ issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token` });
  } else if (url.pathname === "/jwks") {
    json({ keys: [{ ...publicKey.export({ format: "jwk" }), kid: KID, alg: "RS256", use: "sig" }] });
  } else if (url.pathname === "/token") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(token(issuer, url.searchParams.get("sub"), url.searchParams.get("aud")));
  } else {
    res.writeHead(404).end();
  }
});

server.listen(0, "127.0.0.1", () => console.log(`http://127.0.0.1:${server.address().port}`));
