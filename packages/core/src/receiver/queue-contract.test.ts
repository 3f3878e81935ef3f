import { describe, it } from 'vitest';
import { createMemoryQueue } from '@churn-risk/core';
import { queueContract } from '@churn-risk/core/testing';

// The back-end contract of SPEC 13 against the default in-memory queue (each scope its own queue:
// an in-memory store is never shared between receivers).
queueContract({ describe, it }, { name: 'memory', create: () => createMemoryQueue() });
