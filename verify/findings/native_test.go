package findings

import "testing"

const rspec1 = `require "textkit"

RSpec.describe Textkit do
  describe ".truncate" do
    it "keeps short text" do
      expect(Textkit.truncate("short", 10)).to eq("short")
    end

    it "stays within the limit" do
      expect(Textkit.truncate("abcdefghij", 8)).to eq("abcde...")
    end
  end
end
`

const minitest1 = `require "minitest/autorun"

class CalcTest < Minitest::Test
  def test_add
    assert_equal 5, Calc.add(2, 3)
  end

  test "multiplies" do
    assert_equal 6, Calc.mul(2, 3)
  end
end
`

const phpunit1 = `<?php

use PHPUnit\Framework\TestCase;

final class TemperatureTest extends TestCase
{
    public function testBoiling(): void
    {
        $this->assertEqualsWithDelta(212.0, Temperature::toFahrenheit(100), 0.001);
    }

    /** @test */
    public function freezing(): void
    {
        $this->assertEqualsWithDelta(32.0, Temperature::toFahrenheit(0), 0.001);
    }
}
`

const ctest1 = `add_executable(test_math test_math.cpp)
add_test(NAME math_gcd COMMAND test_math)
add_test(NAME math_lcm COMMAND test_math --lcm)
`

// nativeCases are issue 27's languages: tests removed and skipped in
// RSpec, minitest, PHPUnit and CTest files, read by testsrc.
func nativeCases() map[string]analysisCase {
	return map[string]analysisCase{
		"ruby/example removed": {
			files: []File{mod("spec/textkit_spec.rb", rspec1, replace(rspec1, "\n    it \"stays within the limit\" do\n      expect(Textkit.truncate(\"abcdefghij\", 8)).to eq(\"abcde...\")\n    end\n", ""))},
			want:  []string{"tests_removed spec/textkit_spec.rb:9"},
		},
		"ruby/example skipped with xit": {
			files: []File{mod("spec/textkit_spec.rb", rspec1, replace(rspec1, "    it \"stays", "    xit \"stays"))},
			want:  []string{"test_skipped spec/textkit_spec.rb:9"},
		},
		"ruby/minitest method and test block removed": {
			files: []File{mod("test/calc_test.rb", minitest1, "require \"minitest/autorun\"\n\nclass CalcTest < Minitest::Test\nend\n")},
			want:  []string{"tests_removed test/calc_test.rb:0"},
		},
		"ruby/minitest skip call": {
			files: []File{mod("test/calc_test.rb", minitest1, replace(minitest1, "  def test_add\n", "  def test_add\n    skip \"flaky\"\n"))},
			want:  []string{"test_skipped test/calc_test.rb:5"},
		},
		"php/test and @test removed": {
			files: []File{mod("tests/TemperatureTest.php", phpunit1, replace(replace(phpunit1, "/** @test */\n    ", ""), "testBoiling", "boiling"))},
			want:  []string{"tests_removed tests/TemperatureTest.php:0"},
		},
		"php/markTestSkipped": {
			files: []File{mod("tests/TemperatureTest.php", phpunit1, replace(phpunit1, "    {\n        $this->assertEqualsWithDelta(212.0", "    {\n        $this->markTestSkipped('later');\n        $this->assertEqualsWithDelta(212.0"))},
			want:  []string{"test_skipped tests/TemperatureTest.php:9"},
		},
		"ctest/add_test removed": {
			files: []File{mod("tests/CMakeLists.txt", ctest1, replace(ctest1, "add_test(NAME math_lcm COMMAND test_math --lcm)\n", ""))},
			want:  []string{"tests_removed tests/CMakeLists.txt:3"},
		},
	}
}

func TestNativeLanguages(t *testing.T) { golden(t, "native", runCases(t, nativeCases())) }
