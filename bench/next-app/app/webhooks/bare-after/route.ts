import { after } from 'next/server.js';

// The bare route plus one no-op `after()` callback: what Next's `after()` itself costs per request
// (ours hands every accepted alert's processing to `after()`).
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export async function POST(request: Request): Promise<Response> {
  await request.json();
  after(() => undefined);
  return Response.json({ received: true }, { status: 202 });
}
