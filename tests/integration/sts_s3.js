// The SigV4-verifying s3rver fork (@20minutes/s3rver, installed by
// scripts/s3rver.sh) with temporary credentials, as AWS checks them: every
// access key of KEYS_FILE (JSON {"AK": {"sk": "...", "token": "..." or null,
// "expired": bool}}, re-read when it changes) is known to the server; a key
// with a token must send it in a *signed* x-amz-security-token header, else
// 400 InvalidToken; an "expired" key is answered 400 ExpiredToken; a key
// gone from the file is unknown (403 InvalidAccessKeyId).  S3RVER/S3RVER
// stays valid (uploads).  Every signed request is logged to LOG_FILE as
// "OK AK" or "REFUSED CODE AK" (never a secret).
//
//   node sts_s3.js NPM_DIR DATA_DIR PORT KEYS_FILE LOG_FILE
'use strict'
const fs = require('node:fs')
const path = require('node:path')

const [npmDir, dataDir, port, keysFile, logFile] = process.argv.slice(2)
const lib = path.join(npmDir, 'node_modules/@20minutes/s3rver/lib')
const S3rver = require(path.join(lib, 's3rver.js'))
const AWSAccount = require(path.join(lib, 'models/account.js'))

let keys = {}
let keysMtime = -1
function loadKeys() {
  let st
  try {
    st = fs.statSync(keysFile)
  } catch {
    return
  }
  if (st.mtimeMs === keysMtime) return
  let next
  try {
    next = JSON.parse(fs.readFileSync(keysFile, 'utf8'))
  } catch {
    return // being rewritten: keep the old set
  }
  keysMtime = st.mtimeMs
  for (const ak of Object.keys(keys)) {
    if (!(ak in next)) AWSAccount.DUMMY_ACCOUNT.revokeAccessKey(ak)
  }
  for (const [ak, v] of Object.entries(next)) {
    AWSAccount.DUMMY_ACCOUNT.createKeyPair(ak, v.sk)
  }
  keys = next
}

function refuse(ctx, status, code, msg, ak) {
  fs.appendFileSync(logFile, `REFUSED ${code} ${ak}\n`)
  ctx.status = status
  ctx.type = 'application/xml'
  ctx.body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${msg}</Message></Error>`
}

const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory: dataDir,
  silent: true,
  configureBuckets: [{ name: 'ckpt', configs: [] }],
})

server.middleware.unshift(async (ctx, next) => {
  loadKeys()
  const auth = ctx.get('authorization')
  const m = /Credential=([^/]+)\/.*SignedHeaders=([^,]+)/.exec(auth)
  if (!m) return next()
  const [, ak, signed] = m
  if (ak === 'S3RVER') return next()
  const k = keys[ak]
  if (!k) {
    fs.appendFileSync(logFile, `REFUSED InvalidAccessKeyId ${ak}\n`)
    return next() // the fork answers InvalidAccessKeyId itself
  }
  if (k.expired) {
    return refuse(ctx, 400, 'ExpiredToken', 'The provided token has expired.', ak)
  }
  if (k.token) {
    const sent = ctx.get('x-amz-security-token')
    if (sent !== k.token || !signed.split(';').includes('x-amz-security-token')) {
      return refuse(ctx, 400, 'InvalidToken',
        'The provided token is malformed or otherwise invalid.', ak)
    }
  }
  await next()
  fs.appendFileSync(logFile, `${ctx.status < 400 ? 'OK' : 'REFUSED ' + ctx.status} ${ak}\n`)
})

server.run().then(
  (a) => console.log(`listening on ${a.port}`),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
