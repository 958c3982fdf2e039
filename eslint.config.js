// Lint: recommended rules for JS and TypeScript, plus the layer order of src/ (eslint/layers.js); type checking
// itself is `tsc --noEmit`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './eslint/layers.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'bench/node_modules/', 'data/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  { files: ['src/**/*.ts'], plugins: { layers }, rules: { 'layers/order': 'error' } },
);
