// @ts-check
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** Library code may only depend on the OpenTelemetry API; the daemon and CLI own the SDK. */
const sdkImports = {
  patterns: [
    {
      group: ["@opentelemetry/*", "!@opentelemetry/api"],
      message:
        "library code depends on @opentelemetry/api only; the SDK belongs to src/node, src/cli or src/telemetry/sdk",
    },
  ],
};
/** Charting, its server-side DOM and the browser driver serve the CLI's reports, never the library. */
const reportImports = {
  patterns: [
    ...sdkImports.patterns,
    {
      group: ["@observablehq/*", "linkedom", "linkedom/*", "playwright-core", "playwright-core/*"],
      message:
        "charting and browser packages belong to the reports (src/testbed, src/sim) and the tests, not the library",
    },
  ],
};
/** The browser driver is a dev dependency: tests only, never shipped code. */
const shippedReportImports = {
  patterns: [
    ...sdkImports.patterns,
    {
      group: ["playwright-core", "playwright-core/*"],
      message:
        "playwright-core is a dev dependency: the tests drive the browser, the shipped reports never do",
    },
  ],
};
/** The pure decision parts never import the network. */
const networkImports = {
  patterns: [
    ...reportImports.patterns,
    {
      group: ["@grpc/*", "**/mesh/**", "**/node/**", "**/cli/**"],
      message:
        "pure parts (estimate, policy, decision, routing, hedge) must not import the network or the daemon",
    },
  ],
};

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
      "coverage/**",
      "bench/results/**",
      "**/*.cjs",
      "testbed/out/**",
      "out/**",
      // generated from proto/ by scripts/generate-proto.sh
      "src/mesh/gen/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["eslint.config.js"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true },
      ],
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/prefer-promise-reject-errors": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/node/**", "src/cli/**", "src/telemetry/sdk/**"],
    rules: { "no-restricted-imports": ["error", sdkImports] },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/node/**", "src/cli/**", "src/telemetry/sdk/**", "src/testbed/**", "src/sim/**"],
    rules: { "no-restricted-imports": ["error", reportImports] },
  },
  {
    files: ["src/testbed/**/*.ts", "src/sim/**/*.ts"],
    rules: { "no-restricted-imports": ["error", shippedReportImports] },
  },
  {
    files: ["src/estimate/**", "src/policy/**", "src/decision/**", "src/routing/**", "src/hedge/**"],
    rules: { "no-restricted-imports": ["error", networkImports] },
  },
  { files: ["eslint.config.js"], ...tseslint.configs.disableTypeChecked },
  { files: ["**/*.mjs"], ...tseslint.configs.disableTypeChecked },
);
