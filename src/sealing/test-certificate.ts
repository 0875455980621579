/**
 * Test support: a throwaway key pair and a self-signed certificate shaped like
 * the one the sealed-secrets controller generates (CN and O "sealed-secret").
 * Also the key of the code-cache training run (train-runner-code-cache.ts),
 * which seals for it and forgets it.
 *
 * node:crypto reads X.509 but cannot write it, and OpenSSL 3.0's `req -x509`
 * cannot set a start date (`-not_before` arrived in 3.4), which the "newest of
 * several certificates" tests need. So the certificate is DER-encoded here
 * (RFC 5280, a dozen TLVs) and signed with node:crypto; `openssl verify` accepts
 * it. Being pure, this file also passes the sealing folder's no-I/O lint rule.
 * sealing-certificate.test.ts separately parses one made by the real openssl.
 */
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

/** A certificate and the private key that signed it (and that unseals for it). */
export interface TestCertificate {
  readonly certificatePem: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);

function oid(dotted: string): Buffer {
  const [a = 0, b = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const arc of rest) {
    const groups: number[] = [];
    for (let v = arc; ; v = Math.floor(v / 128)) {
      groups.unshift((v % 128) | (groups.length > 0 ? 0x80 : 0));
      if (v < 128) break;
    }
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function positiveInteger(bytes: Buffer): Buffer {
  return tlv(0x02, (bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

// RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050.
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  const year = date.getUTCFullYear();
  return year >= 1950 && year < 2050 ? tlv(0x17, Buffer.from(iso.slice(2))) : tlv(0x18, Buffer.from(iso));
}

// DER wants an INTEGER's minimal encoding: a random serial starting with a zero
// byte (1 time in 256) would be one OpenSSL refuses to read. Keep the first
// byte non-zero (and the number positive).
function serialNumber(): Buffer {
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01;
  return serial;
}

function name(commonName: string): Buffer {
  const attribute = (type: string, value: string): Buffer => tlv(0x31, sequence(oid(type), tlv(0x0c, Buffer.from(value, 'utf8'))));
  return sequence(attribute('2.5.4.10', 'sealed-secret'), attribute('2.5.4.3', commonName));
}

function pem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/**
 * Creates a self-signed sealing certificate for tests.
 *
 * @param opts.bits - RSA modulus size @default 2048 (the controller uses 4096; 2048 keeps tests fast)
 * @param opts.keyType - `ec` makes a P-256 certificate, for the not-RSA case @default `rsa`
 * @param opts.notBefore - @default now minus one minute
 * @param opts.notAfter - @default notBefore plus ten years (the controller's validity)
 */
export function createTestCertificate(
  opts: {
    bits?: number;
    keyType?: 'rsa' | 'ec';
    notBefore?: Date;
    notAfter?: Date;
    commonName?: string;
  } = {},
): TestCertificate {
  const bits = opts.bits ?? 2048;
  const commonName = opts.commonName ?? 'sealed-secret';
  const { privateKey, publicKey } =
    opts.keyType === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) : generateKeyPairSync('rsa', { modulusLength: bits });
  const notBefore = opts.notBefore ?? new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
  const notAfter = opts.notAfter ?? new Date(notBefore.getTime() + 3650 * 86_400_000);

  // sha256WithRSAEncryption carries explicit NULL parameters; ecdsa-with-SHA256 carries none.
  const signatureAlgorithm = opts.keyType === 'ec' ? sequence(oid('1.2.840.10045.4.3.2')) : sequence(oid('1.2.840.113549.1.1.11'), tlv(0x05));
  const subject = name(commonName);
  const tbs = sequence(
    tlv(0xa0, positiveInteger(Buffer.from([2]))), // [0] EXPLICIT version v3
    positiveInteger(serialNumber()),
    signatureAlgorithm,
    subject, // issuer: self-signed
    sequence(time(notBefore), time(notAfter)),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, signatureAlgorithm, tlv(0x03, Buffer.from([0]), signature));
  return { certificatePem: pem(der), privateKey, publicKey };
}
