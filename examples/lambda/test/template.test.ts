import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, type CollectionTag, type ScalarTag } from 'yaml';

// The SAM template of queue mode, read as CloudFormation reads it. Its short-form
// intrinsic functions (`!Ref X`, `!GetAtt X.Arn`) become `{ Ref: 'X' }` and
// `{ 'Fn::GetAtt': ['X', 'Arn'] }`, so that the checks below can follow the references.

const scalar = (tag: string, resolve: (value: string) => unknown): ScalarTag => ({
  tag,
  resolve,
});
const sequence = (tag: string, key: string): CollectionTag => ({
  tag,
  collection: 'seq',
  resolve: (value) => ({ [key]: value.toJSON() as unknown }),
});
const CLOUDFORMATION_TAGS = [
  scalar('!Ref', (value) => ({ Ref: value })),
  scalar('!GetAtt', (value) => {
    const [resource, ...attribute] = value.split('.');
    return { 'Fn::GetAtt': [resource, attribute.join('.')] };
  }),
  scalar('!Sub', (value) => ({ 'Fn::Sub': value })),
  sequence('!Sub', 'Fn::Sub'),
  sequence('!Join', 'Fn::Join'),
  sequence('!If', 'Fn::If'),
];

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
}
interface Template {
  Transform: string;
  Globals: { Function: { Timeout: number; Runtime: string } };
  Resources: Record<string, Resource>;
}

const template = parse(readFileSync(new URL('../template.yaml', import.meta.url), 'utf8'), {
  customTags: CLOUDFORMATION_TAGS,
}) as Template;
const resources = template.Resources;

/** The resource a `{ Ref }` or `{ 'Fn::GetAtt' }` points at, checked to exist. */
function target(reference: unknown): [string, Resource] {
  const ref = reference as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
  const name = ref.Ref ?? ref['Fn::GetAtt']?.[0] ?? '';
  const resource = resources[name];
  if (resource === undefined) throw new Error(`no resource ${name} (${JSON.stringify(reference)})`);
  return [name, resource];
}

const fn = resources.WebhookFunction as Resource;
const events = fn.Properties.Events as Record<
  string,
  { Type: string; Properties: Record<string, unknown> }
>;
const sqsEvent = Object.values(events).find((event) => event.Type === 'SQS');
const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;

describe('examples/lambda/template.yaml (AWS SAM, queue mode)', () => {
  it('parses with the CloudFormation tags resolved', () => {
    expect(template.Transform).toBe('AWS::Serverless-2016-10-31');
    expect(variables.CHURN_RISK_QUEUE_URL).toEqual({ Ref: 'AlertQueue' });
    expect(fn.Properties.Handler).toBe('queue-handler.handler');
  });

  it('gives the function a function URL', () => {
    expect(fn.Type).toBe('AWS::Serverless::Function');
    expect(fn.Properties.FunctionUrlConfig).toEqual({ AuthType: 'NONE' });
  });

  it('maps the queue to the function with ReportBatchItemFailures', () => {
    expect(sqsEvent).toBeDefined();
    const [queueName, queue] = target(sqsEvent?.Properties.Queue);
    expect([queueName, queue.Type]).toEqual(['AlertQueue', 'AWS::SQS::Queue']);
    expect(variables.CHURN_RISK_QUEUE_URL).toEqual({ Ref: queueName });
    expect(sqsEvent?.Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(sqsEvent?.Properties.BatchSize).toBeLessThanOrEqual(10);
  });

  it('sets the visibility timeout to at least 6 times the function timeout', () => {
    const timeout =
      (fn.Properties.Timeout as number | undefined) ?? template.Globals.Function.Timeout;
    const [, queue] = target(sqsEvent?.Properties.Queue);
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * timeout);
  });

  it('gives the queue a dead-letter queue through a redrive policy, above maxStalls + 1 receives', () => {
    const [, queue] = target(sqsEvent?.Properties.Queue);
    const redrive = queue.Properties.RedrivePolicy as {
      deadLetterTargetArn: unknown;
      maxReceiveCount: number;
    };
    const [, deadLetters] = target(redrive.deadLetterTargetArn);
    expect(deadLetters.Type).toBe('AWS::SQS::Queue');
    expect(redrive.deadLetterTargetArn).toEqual({ 'Fn::GetAtt': ['AlertDeadLetterQueue', 'Arn'] });
    expect(redrive.maxReceiveCount).toBeGreaterThan(3 + 1);
  });

  it('makes both tables with their keys and TTL on expiresAt, and passes their names', () => {
    const [dedupeName, dedupe] = target(variables.CHURN_RISK_DEDUPE_TABLE);
    const [failedName, failed] = target(variables.CHURN_RISK_FAILED_TABLE);
    expect(dedupeName).not.toBe(failedName);
    for (const table of [dedupe, failed]) {
      expect(table.Type).toBe('AWS::DynamoDB::Table');
      expect(table.Properties.TimeToLiveSpecification).toEqual({
        AttributeName: 'expiresAt',
        Enabled: true,
      });
    }
    expect(dedupe.Properties.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(failed.Properties.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
  });

  it('bundles the handler with the AWS SDK left external (the runtime ships it)', () => {
    const build = fn.Metadata?.BuildProperties as { External: string[]; EntryPoints: string[] };
    expect(fn.Metadata?.BuildMethod).toBe('esbuild');
    expect(build.External).toContain('@aws-sdk/*');
    expect(build.EntryPoints).toEqual(['src/queue-handler.ts']);
  });
});
