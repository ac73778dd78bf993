package testsrc

import (
	"slices"
	"testing"
)

func TestRubyTests(t *testing.T) {
	spec := "RSpec.describe Textkit do\n  describe \".truncate\" do\n    it \"keeps short text\" do\n      skip \"later\"\n    end\n" +
		"    xit \"is skipped\" do\n    end\n    it \"is pending\"\n    it \"opts out\", skip: true do\n    end\n  end\n  context \"when empty\" do\n    it \"gives nil\" do\n    end\n  end\nend\n"
	tests, _ := Tests("spec/textkit_spec.rb", []byte(spec))
	want := []string{"Textkit when empty gives nil", "Textkit.truncate is pending", "Textkit.truncate is skipped", "Textkit.truncate keeps short text", "Textkit.truncate opts out"}
	if got := testNames(tests); !slices.Equal(got, want) {
		t.Fatalf("tests = %q, want %q", got, want)
	}
	for i, n := range []int{1, 1, 1, 1, 0} {
		if len(tests[i].Skips) != n {
			t.Errorf("%s: skips %+v, want %d", tests[i].Name, tests[i].Skips, n)
		}
	}
	mini := "class CalcTest < Minitest::Test\n  def test_add\n  end\n\n  def helper\n  end\n\n  test \"multiplies two\" do\n    skip\n  end\nend\n"
	tests, _ = Tests("test/calc_test.rb", []byte(mini))
	if got := testNames(tests); !slices.Equal(got, []string{"CalcTest#test_add", "CalcTest#test_multiplies_two"}) {
		t.Fatalf("minitest = %q", got)
	}
	if len(tests[1].Skips) != 1 || tests[1].Short != "test_multiplies_two" || tests[1].Described != "multiplies two" || tests[0].Described != "" {
		t.Errorf("test block = %+v", tests[1])
	}
}

// TestRubySubTestCase: test-unit names the tests of a `sub_test_case`
// block after the subclass it defines, "Class::name", nested ones
// joined too.
func TestRubySubTestCase(t *testing.T) {
	src := "class SlugTest < Test::Unit::TestCase\n  def test_spaces\n  end\n\n  sub_test_case \"nil title\" do\n    def test_nil\n    end\n\n" +
		"    test \"gives empty\" do\n    end\n\n    sub_test_case \"deeper\" do\n      def test_deep\n      end\n    end\n  end\nend\n"
	tests, _ := Tests("test/slug_test.rb", []byte(src))
	want := []string{"SlugTest#test_spaces", "SlugTest::nil title#test_gives_empty", "SlugTest::nil title#test_nil", "SlugTest::nil title::deeper#test_deep"}
	if got := testNames(tests); !slices.Equal(got, want) {
		t.Fatalf("tests = %q, want %q", got, want)
	}
}

func TestPHPTests(t *testing.T) {
	src := "<?php\nfinal class TempTest extends TestCase\n{\n    public function testA(): void { $this->markTestSkipped('x'); }\n" +
		"    /** @test */\n    public function boils(): void {}\n    #[Test]\n    public function freezes(): void {}\n    public function helper(): void {}\n}\n"
	tests, _ := Tests("tests/TempTest.php", []byte(src))
	if got := testNames(tests); !slices.Equal(got, []string{"TempTest::boils", "TempTest::freezes", "TempTest::testA"}) {
		t.Fatalf("tests = %q", got)
	}
	if len(tests[0].Skips) != 1 || len(tests[1].Skips) != 0 {
		t.Errorf("skips: %+v, %+v", tests[0].Skips, tests[1].Skips)
	}
}

func TestCMakeAndCppTests(t *testing.T) {
	cm := "add_executable(t t.cpp)\nadd_test(NAME math_gcd COMMAND t)\n# add_test(NAME commented COMMAND t)\nadd_test(old_style t --x)\n"
	tests, _ := Tests("tests/CMakeLists.txt", []byte(cm))
	if got := testNames(tests); !slices.Equal(got, []string{"math_gcd", "old_style"}) {
		t.Fatalf("cmake = %q", got)
	}
	ms := "exe = executable('t', 't.c')\ntest('percent_part', exe)\n# test('commented', exe)\n  test('args', exe, args : ['-v'])\nbenchmark('speed', exe)\n"
	tests, _ = Tests("tests/meson.build", []byte(ms))
	if got := testNames(tests); !slices.Equal(got, []string{"args", "percent_part", "speed"}) {
		t.Fatalf("meson = %q", got)
	}
	if tests[2].Kind != KindBenchmark || tests[0].Kind != KindTest {
		t.Errorf("meson kinds: %+v", tests)
	}
	// The project's own meson.build is build code, not a test file.
	if tests, _ := Tests("meson.build", []byte(ms)); len(tests) != 0 {
		t.Errorf("root meson.build read for tests: %+v", tests)
	}
	cpp := "#include <gtest/gtest.h>\n// TEST(Fake, Commented) {}\nTEST(Math, Gcd) {\n  EXPECT_EQ(gcd(4, 6), 2);\n}\n\nTEST_F(Fix, DISABLED_Slow) {\n}\n\nTEST_CASE(\"adds numbers\", \"[math]\") {\n  GTEST_SKIP();\n}\n"
	tests, _ = Tests("tests/math_test.cpp", []byte(cpp))
	if got := testNames(tests); !slices.Equal(got, []string{"Fix.DISABLED_Slow", "Math.Gcd", "adds numbers"}) {
		t.Fatalf("cpp = %q", got)
	}
	if len(tests[0].Skips) != 0 || len(tests[1].Skips) != 1 || len(tests[2].Skips) != 1 {
		t.Errorf("skips: %+v %+v %+v", tests[0].Skips, tests[1].Skips, tests[2].Skips)
	}
	if _, ok := Code("src/a.cpp", []byte("int x;")); ok {
		t.Error("C++ code claimed comparable without a parser")
	}
}
