import type { NextApiRequest, NextApiResponse } from 'next';
import { createPagesHandler } from '@churn-risk/next';
import { exampleReceiver } from '../../../lib/receiver';

// Next must leave the body unread: the signature covers the raw bytes.
export const config = { api: { bodyParser: false } };

// The receiver is made on first use, as the secret may not be set while `next build` loads this.
export default function handler(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  return createPagesHandler(exampleReceiver('pages-router'))(req, res);
}
