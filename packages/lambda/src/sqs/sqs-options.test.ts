import { describe, expect, it } from 'vitest';
import { createSqsQueue } from '../index.js';
import { resolveSqsQueueOptions } from './sqs-options.js';

const TABLES = { dedupeTable: 'identities', failedTable: 'failed' };

describe('queueUrl', () => {
  it('takes every queue URL the AWS SDK takes, and reads the account and the name from its path', () => {
    const cases: [string, string, string][] = [
      ['https://sqs.us-east-1.amazonaws.com/123456789012/alerts', '123456789012', 'alerts'],
      [
        'https://sqs.eu-west-1.amazonaws.com/123456789012/alerts.fifo',
        '123456789012',
        'alerts.fifo',
      ],
      ['https://sqs.cn-north-1.amazonaws.com.cn/123456789012/a_b-c', '123456789012', 'a_b-c'],
      // An emulator's host, which WHATWG URL refuses (its last label is a number, so it must be a
      // whole IPv4 address there): fauxqs with FAUXQS_HOST=127.0.0.1, or LocalStack's.
      ['http://sqs.us-east-1.127.0.0.1:4566/000000000000/alerts', '000000000000', 'alerts'],
      // The fauxqs CLI's own form (its default host, localhost).
      ['http://sqs.us-east-1.localhost:4566/000000000000/alerts', '000000000000', 'alerts'],
      ['http://127.0.0.1:4566/000000000000/alerts', '000000000000', 'alerts'],
      ['http://localhost:9324/queue/alerts', 'queue', 'alerts'],
      ['HTTPS://sqs.us-east-1.amazonaws.com/123456789012/alerts/', '123456789012', 'alerts'],
    ];
    for (const [queueUrl, account, name] of cases) {
      expect(createSqsQueue({ queueUrl, ...TABLES }).queueUrl, queueUrl).toBe(queueUrl);
      expect(resolveSqsQueueOptions({ queueUrl, ...TABLES }), queueUrl).toMatchObject({
        queueUrl,
        queueKey: `${account}/${name}`,
        queueName: name,
      });
    }
  });

  it('refuses anything else with a TypeError that does not echo the value', () => {
    const cases: unknown[] = [
      undefined,
      42,
      '',
      'alerts',
      'sqs.us-east-1.amazonaws.com/123456789012/alerts',
      'ftp://sqs.us-east-1.amazonaws.com/123456789012/alerts',
      'https://sqs.us-east-1.amazonaws.com/alerts',
      'https://sqs.us-east-1.amazonaws.com/123456789012/alerts/more',
      'https://sqs.us-east-1.amazonaws.com//alerts',
      'https://sqs.us-east-1.amazonaws.com/123456789012/alerts?x=1',
      'https://user:s3cret@sqs.us-east-1.amazonaws.com/123456789012/alerts',
      'https:///123456789012/alerts',
    ];
    for (const queueUrl of cases) {
      const attempt = (): unknown => createSqsQueue({ queueUrl: queueUrl as string, ...TABLES });
      expect(attempt, String(queueUrl)).toThrow(TypeError);
      expect(attempt).toThrow('queueUrl must be a queue URL, http(s)://<host>/<account>/<name>.');
    }
  });
});
