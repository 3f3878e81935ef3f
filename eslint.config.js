// @ts-check
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** A Node built-in's import: `node:x`, or bare (`fs`, `fs/promises`). */
const NODE_BUILTIN = `^(?:node:|(?:${builtinModules.filter((name) => !name.includes('/')).join('|')})(?:/|$))`;

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      '**/.next/**',
      '**/coverage/**',
      '**/next-env.d.ts',
      'docs/api/**',
      'docs/api-json/**',
      '**/*.config.js',
      '**/*.config.mjs',
      '**/*.config.ts',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Adapters speak to the core through its public entry only.
    files: [
      'packages/express/**',
      'packages/fastify/**',
      'packages/next/**',
      'packages/sandbox/**',
      'packages/hono/**',
      'packages/koa/**',
      'packages/lambda/**',
      'packages/cloudflare/**',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@churn-risk/core/src/*', '**/core/src/*'],
              message: 'Import @churn-risk/core by its public entry.',
            },
          ],
        },
      ],
    },
  },
  {
    // Core's source runs in Node, workerd, Deno and browsers: no Node built-in, `node:` or bare.
    // Node-only code lives in core/src/node/ (its own entry), or in a `*-node.ts` variant that a
    // `#imports` condition selects.
    files: ['packages/core/src/**'],
    ignores: [
      'packages/core/src/node/**',
      'packages/core/src/**/*-node.ts',
      'packages/core/src/**/*.test.ts',
      'packages/core/src/**/*.test-d.ts',
      'packages/core/src/**/*.test-util.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: NODE_BUILTIN,
              message:
                'Core is runtime-neutral: put Node-only code in packages/core/src/node/ or a ' +
                '*-node.ts variant chosen by a #imports condition.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests may use loose typing around deliberately malformed input.
    files: ['**/*.test.ts', '**/*.test-d.ts', '**/test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-unsafe-type-assertion': 'off',
    },
  },
);
