import { alertBody, signHeaders } from './alert.js';

/** A signed delivery as a Node server hands it over: the body bytes and a headers record. */
export interface Delivery {
  body: Buffer;
  headers: Record<string, string>;
}

/** A fresh signed ~250-byte alert with the headers a Node server would see for it. */
export function signedDelivery(): Delivery {
  const text = alertBody();
  return {
    body: Buffer.from(text),
    headers: {
      host: '127.0.0.1:3000',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      connection: 'keep-alive',
      'user-agent': 'churn-risk-bench',
      ...signHeaders(text),
    },
  };
}
