package findings

import "testing"

const jsCode1 = `
// greet says hello.
export function greet(name) {
  return "hello " + name;
}
`

const jsTest1 = `
import { greet } from "../src/greet.js";

describe("greet", () => {
  it("says hello", () => {
    expect(greet("a")).toBe("hello a");
  });

  test("says hello to b", () => {
    expect(greet("b")).toBe("hello b");
  });
});

it.each([["c", "hello c"]])("greets %s", (n, want) => {
  expect(greet(n)).toBe(want);
});
`

func jsCases() map[string]analysisCase {
	return map[string]analysisCase{
		"js/test removed": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, "\n  test(\"says hello to b\", () => {\n    expect(greet(\"b\")).toBe(\"hello b\");\n  });\n", ""))},
			want:  []string{"tests_removed test/greet.test.js:8"},
		},
		"js/new test beside the old ones": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, "});\n\nit.each", "\n  it(\"says hello to nobody\", () => {\n    expect(greet(\"\")).toBe(\"hello \");\n  });\n});\n\nit.each"))},
		},
		"js/test moved to another file": {
			files: []File{
				mod("test/greet.test.js", jsTest1, replace(jsTest1, "it.each([[\"c\", \"hello c\"]])(\"greets %s\", (n, want) => {\n  expect(greet(n)).toBe(want);\n});\n", "")),
				add("test/each.test.js", "import { greet } from \"../src/greet.js\";\n\nit.each([[\"c\", \"hello c\"]])(\"greets %s\", (n, want) => {\n  expect(greet(n)).toBe(want);\n});\n"),
			},
		},
		"js/test file deleted": {
			files: []File{del("test/greet.test.js", jsTest1)},
			want:  []string{"tests_removed test/greet.test.js:0"},
		},
		"js/it.skip added": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `it("says hello"`, `it.skip("says hello"`))},
			want:  []string{"test_skipped test/greet.test.js:4"},
		},
		"js/xit added": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `it("says hello"`, `xit("says hello"`))},
			want:  []string{"test_skipped test/greet.test.js:4"},
		},
		"js/test.skip added": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `test("says`, `test.skip("says`))},
			want:  []string{"test_skipped test/greet.test.js:8"},
		},
		"js/describe.skip added": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `describe("greet"`, `describe.skip("greet"`))},
			want:  []string{"test_skipped test/greet.test.js:3"},
		},
		"js/it.each.skip added": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `it.each(`, `it.skip.each(`))},
			want:  []string{"test_skipped test/greet.test.js:13"},
		},
		"js/it.only added": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `test("says`, `test.only("says`))},
			want:  []string{"test_skipped test/greet.test.js:8"},
		},
		"js/new test with only": {
			files: []File{mod("test/greet.test.js", jsTest1, jsTest1+"\nfit(\"works\", () => {\n  expect(greet(\"d\")).toBe(\"hello d\");\n});\n")},
			want:  []string{"test_skipped test/greet.test.js:17"},
		},
		"js/new skipped test is no finding": {
			files: []File{mod("test/greet.test.js", jsTest1, jsTest1+"\nit.todo(\"greets in French\");\n")},
		},
		"js/node:test skip option": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `test("says hello to b", () => {`, `test("says hello to b", { skip: true }, () => {`))},
			want:  []string{"test_skipped test/greet.test.js:8"},
		},
		"js/this.skip inside a test": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, "    expect(greet(\"a\"))", "    this.skip();\n    expect(greet(\"a\"))"))},
			want:  []string{"test_skipped test/greet.test.js:5"},
		},
		"js/ava hooks are not tests": {
			files: []File{mod("test/ava.js", "import test from 'ava';\n\ntest.beforeEach(t => {\n  t.context.x = 1;\n});\n\ntest('don\\'t fail', t => {\n  t.is(greet('a'), 'hello a');\n});\n",
				"import test from 'ava';\n\ntest('don\\'t fail', t => {\n  t.is(greet('a'), 'hello a');\n});\n")},
		},
		"js/escaped test name": {
			files: []File{mod("test/ava.js", "import test from 'ava';\n\ntest('don\\'t fail', t => {\n  t.is(greet('a'), 'hello a');\n});\n", "import test from 'ava';\n")},
			want:  []string{"tests_removed test/ava.js:3"},
		},
		"js/comment edited in a test": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, "    expect(greet(\"a\")).toBe(\"hello a\");\n", "    // a greets\n    expect(greet(\"a\")).toBe(\"hello a\"); // exact\n"))},
		},
		"js/a function named test is not a test": {
			files: []File{mod("test/util.js", "export const ok = test('a') && test(name);\n", "export const ok = test('b');\n")},
			// It is a test helper, though: a file of the tests that declares none.
			want: []string{"harness_changed test/util.js:1"},
		},
		"js/expected value edited, code unchanged": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `toBe("hello b")`, `toBe("hello B")`))},
			want:  []string{"assertion_changed test/greet.test.js:9"},
		},
		"js/assertion loosened, code unchanged": {
			files: []File{mod("test/greet.test.js", jsTest1, replace(jsTest1, `expect(greet("a")).toBe("hello a");`, `expect(greet("a")).toBeDefined();`))},
			want:  []string{"assertion_changed test/greet.test.js:5"},
		},
		"js/expected value edited with the code": {
			files: []File{
				mod("src/greet.js", jsCode1, replace(jsCode1, `"hello "`, `"hi "`)),
				mod("test/greet.test.js", jsTest1, replace(jsTest1, `("hello `, `("hi `)),
			},
		},
		"js/only tests changed for a bug": {
			title: "greet is broken for empty names",
			files: []File{mod("test/greet.test.js", jsTest1, jsTest1+"\nit(\"greets nobody\", () => {\n  expect(greet(\"\")).toBe(\"hello \");\n});\n")},
			want:  []string{"only_tests_changed test/greet.test.js:16"},
		},
		"ts/it.skip added": {
			files: []File{mod("src/greet.spec.ts", "import { greet } from './greet';\n\nit('greets', (): void => {\n  expect(greet('a' as string)).toBe('hello a');\n});\n",
				"import { greet } from './greet';\n\nit.skip('greets', (): void => {\n  expect(greet('a' as string)).toBe('hello a');\n});\n")},
			want: []string{"test_skipped src/greet.spec.ts:3"},
		},
		"tsx/test removed": {
			files: []File{mod("src/App.test.tsx", "import { App } from './App';\n\ntest('renders', () => {\n  render(<App />);\n});\n\ntest('clicks', () => {\n  render(<App onClick={f} />);\n});\n",
				"import { App } from './App';\n\ntest('renders', () => {\n  render(<App />);\n});\n")},
			want: []string{"tests_removed src/App.test.tsx:7"},
		},
		"js/package.json test script narrowed": {
			files: []File{mod("package.json", "{\n  \"name\": \"app\",\n  \"scripts\": {\n    \"test\": \"jest\"\n  }\n}\n", "{\n  \"name\": \"app\",\n  \"scripts\": {\n    \"test\": \"jest test/other\"\n  }\n}\n")},
			want:  []string{"harness_changed package.json:4", "test_skipped package.json:4"},
		},
		"js/package.json other script changed": {
			files: []File{mod("package.json", "{\n  \"name\": \"app\",\n  \"scripts\": {\n    \"test\": \"jest\",\n    \"build\": \"tsc\"\n  }\n}\n", "{\n  \"name\": \"app\",\n  \"scripts\": {\n    \"test\": \"jest\",\n    \"build\": \"tsc -p .\"\n  }\n}\n")},
		},
		"js/jest config ignores a folder": {
			files: []File{mod("jest.config.js", "module.exports = {\n  testEnvironment: 'node',\n};\n", "module.exports = {\n  testEnvironment: 'node',\n  testPathIgnorePatterns: ['/test/greet'],\n};\n")},
			want:  []string{"harness_changed jest.config.js:3", "test_skipped jest.config.js:3"},
		},
		"js/vitest config unrelated option": {
			files: []File{mod("vitest.config.ts", "export default { test: { environment: 'node' } };\n", "export default { test: { environment: 'jsdom' } };\n")},
			// No test is skipped, but the runner's configuration changed.
			want: []string{"harness_changed vitest.config.ts:1"},
		},
		"js/jest setup file added": {
			files: []File{mod("jest.config.js", "module.exports = {\n  testEnvironment: 'node',\n};\n", "module.exports = {\n  testEnvironment: 'node',\n  setupFilesAfterEnv: ['./test/setup.js'],\n};\n")},
			want:  []string{"harness_changed jest.config.js:3"},
		},
		"js/mocharc spec changed": {
			files: []File{mod(".mocharc.json", "{\"spec\": \"test/**/*.js\"}\n", "{\"spec\": \"test/unit/*.js\"}\n")},
			want:  []string{"harness_changed .mocharc.json:1", "test_skipped .mocharc.json:1"},
		},
	}
}

func TestJavaScript(t *testing.T) { golden(t, "javascript", runCases(t, jsCases())) }
