import { describeExampleShutdown } from '../../../test/support/example-shutdown-suite.js';

describeExampleShutdown('express');
