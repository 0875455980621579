/**
 * What the operator must see of a pasted certificate before anything is
 * resealed to it: its SHA-256 fingerprint (the `sealing.gitops-scaffolder.io/
 * sealed-with` form, `sha256:<hex of the DER>`) and its validity window.
 * Computed in the browser with WebCrypto from the PEM itself, so the
 * confirmation names the certificate that was pasted, not one the page assumed.
 * Only the DER path to tbsCertificate.validity is read; anything else is not
 * looked at, and input that is not a certificate gives null, never a throw.
 */

export interface CertificateFacts {
  /** `sha256:` and the lower-case hex SHA-256 of the DER. */
  readonly fingerprint: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
}

/** The DER of the first `CERTIFICATE` block of a PEM text, or null. */
export function firstCertificateDer(pem: string): Uint8Array<ArrayBuffer> | null {
  const match = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem);
  if (match?.[1] === undefined) return null;
  const base64 = match[1].replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return null;
  try {
    const binary = atob(base64);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  } catch {
    return null;
  }
}

interface Tlv {
  readonly tag: number;
  readonly start: number;
  readonly end: number;
}

/** One DER tag-length-value at `offset` inside `[offset, limit)`, or null when it does not fit. */
function tlvAt(der: Uint8Array, offset: number, limit: number): Tlv | null {
  if (offset + 2 > limit) return null;
  const tag = der[offset]!;
  let length = der[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || start + count > limit) return null;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[start + i]!;
    start += count;
  }
  const end = start + length;
  return end > limit ? null : { tag, start, end };
}

/** The children of a constructed value. */
function childrenOf(der: Uint8Array, parent: Tlv, max: number): Tlv[] {
  const children: Tlv[] = [];
  for (let offset = parent.start; offset < parent.end && children.length < max;) {
    const child = tlvAt(der, offset, parent.end);
    if (child === null) break;
    children.push(child);
    offset = child.end;
  }
  return children;
}

const SEQUENCE = 0x30;
const UTC_TIME = 0x17;
const GENERALIZED_TIME = 0x18;

function timeOf(der: Uint8Array, tlv: Tlv): Date | null {
  const text = String.fromCharCode(...der.subarray(tlv.start, tlv.end));
  // RFC 5280 4.1.2.5: UTCTime YYMMDDHHMMSSZ (YY < 50: 20YY), GeneralizedTime YYYYMMDDHHMMSSZ.
  const match =
    tlv.tag === UTC_TIME
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
      : tlv.tag === GENERALIZED_TIME
        ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
        : null;
  if (match === null) return null;
  const [, y, mo, d, h, mi, s] = match.map(Number) as [number, number, number, number, number, number, number];
  const year = tlv.tag === UTC_TIME ? (y < 50 ? 2000 + y : 1900 + y) : y;
  const date = new Date(Date.UTC(year, mo - 1, d, h, mi, s));
  return Number.isNaN(date.getTime()) ? null : date;
}

/** tbsCertificate.validity of a DER certificate, or null. */
export function validityOf(der: Uint8Array): { notBefore: Date; notAfter: Date } | null {
  const certificate = tlvAt(der, 0, der.length);
  if (certificate?.tag !== SEQUENCE) return null;
  const tbs = childrenOf(der, certificate, 1)[0];
  if (tbs?.tag !== SEQUENCE) return null;
  const fields = childrenOf(der, tbs, 6);
  // [0] version is optional; then serialNumber, signature, issuer, validity.
  const validity = fields[fields[0]?.tag === 0xa0 ? 4 : 3];
  if (validity?.tag !== SEQUENCE) return null;
  const [from, to] = childrenOf(der, validity, 2);
  if (from === undefined || to === undefined) return null;
  const notBefore = timeOf(der, from);
  const notAfter = timeOf(der, to);
  return notBefore === null || notAfter === null ? null : { notBefore, notAfter };
}

/** The fingerprint and validity of the first certificate of `pem`, or null when it holds none that reads as one. */
export async function certificateFacts(pem: string): Promise<CertificateFacts | null> {
  const der = firstCertificateDer(pem);
  if (der === null) return null;
  const validity = validityOf(der);
  if (validity === null) return null;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', der));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  return { fingerprint: `sha256:${hex}`, ...validity };
}
