// The baseline: a bare App Router route handler that parses the JSON body and verifies nothing.
export const runtime = 'nodejs';
export const dynamic = 'force-dynamic';

export async function POST(request: Request): Promise<Response> {
  await request.json();
  return Response.json({ received: true }, { status: 202 });
}
