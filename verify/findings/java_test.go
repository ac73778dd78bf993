package findings

import "testing"

const javaCode1 = `
package app;

/** Says hello. */
public class Greeter {
    public String greet(String name) {
        return "hello " + name;
    }
}
`

const javaTest1 = `
package app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class GreeterTest {
    @Test
    void greetsA() {
        assertEquals("hello a", new Greeter().greet("a"));
    }

    @Test
    void greetsB() {
        assertEquals("hello b", new Greeter().greet("b"));
    }
}
`

const javaTestPath = "src/test/java/app/GreeterTest.java"

func javaCases() map[string]analysisCase {
	return map[string]analysisCase{
		"java/test removed": {
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, "\n    @Test\n    void greetsB() {\n        assertEquals(\"hello b\", new Greeter().greet(\"b\"));\n    }\n", ""))},
			want:  []string{"tests_removed src/test/java/app/GreeterTest.java:13"},
		},
		"java/Test annotation removed": {
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, "    @Test\n    void greetsA", "    void greetsA"))},
			want:  []string{"tests_removed src/test/java/app/GreeterTest.java:8"},
		},
		"java/new test beside the old ones": {
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, "    }\n}\n", "    }\n\n    @Test\n    void greetsNobody() {\n        assertEquals(\"hello \", new Greeter().greet(\"\"));\n    }\n}\n"))},
		},
		"java/test moved to another class": {
			files: []File{
				mod(javaTestPath, javaTest1, replace(javaTest1, "\n    @Test\n    void greetsB() {\n        assertEquals(\"hello b\", new Greeter().greet(\"b\"));\n    }\n", "")),
				add("src/test/java/app/GreeterBTest.java", "package app;\n\nimport org.junit.jupiter.api.Test;\n\nclass GreeterBTest {\n  @Test\n  void greetsB() {\n    assertEquals(\"hello b\", new Greeter().greet(\"b\"));\n  }\n}\n"),
			},
		},
		"java/test file deleted": {
			files: []File{del(javaTestPath, javaTest1)},
			want:  []string{"tests_removed src/test/java/app/GreeterTest.java:0"},
		},
		"java/Disabled added": {
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, "    @Test\n    void greetsB", "    @Test\n    @Disabled(\"flaky\")\n    void greetsB"))},
			want:  []string{"test_skipped src/test/java/app/GreeterTest.java:14"},
		},
		"java/Disabled on the class": {
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, "class GreeterTest", "@Disabled\nclass GreeterTest"))},
			want:  []string{"test_skipped src/test/java/app/GreeterTest.java:7"},
		},
		"java/JUnit 4 Ignore added": {
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, "    @Test\n    void greetsA", "    @Test @org.junit.Ignore\n    void greetsA"))},
			want:  []string{"test_skipped src/test/java/app/GreeterTest.java:8"},
		},
		"java/assumption added": {
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, "    void greetsA() {\n", "    void greetsA() {\n        assumeTrue(false);\n"))},
			want:  []string{"test_skipped src/test/java/app/GreeterTest.java:10"},
		},
		"java/comment fixed in a test": {
			files: []File{mod(javaTestPath, replace(javaTest1, "    void greetsA() {\n", "    void greetsA() {\n        // Test wiht a\n"), replace(javaTest1, "    void greetsA() {\n", "    void greetsA() {\n        /* Test with a */\n"))},
		},
		"java/comment deleted in a test": {
			files: []File{mod(javaTestPath, replace(javaTest1, "    void greetsA() {\n", "    void greetsA() {\n        // Test with a\n"), javaTest1)},
		},
		"java/expected value edited, code unchanged": {
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, `assertEquals("hello b"`, `assertEquals("hello B"`))},
			want:  []string{"assertion_changed src/test/java/app/GreeterTest.java:15"},
		},
		"java/expected value edited with the code": {
			files: []File{
				mod("src/main/java/app/Greeter.java", javaCode1, replace(javaCode1, `"hello "`, `"hi "`)),
				mod(javaTestPath, javaTest1, replace(javaTest1, `"hello `, `"hi `)),
			},
		},
		"java/only tests changed for a bug": {
			title: "Greeter throws a NullPointerException",
			files: []File{mod(javaTestPath, javaTest1, replace(javaTest1, "    }\n}\n", "    }\n\n    @Test\n    void greetsNobody() {\n        assertEquals(\"hello \", new Greeter().greet(\"\"));\n    }\n}\n"))},
			want:  []string{"only_tests_changed src/test/java/app/GreeterTest.java:17"},
		},
		"java/surefire skips tests": {
			files: []File{mod("pom.xml", pom1, replace(pom1, "<artifactId>maven-surefire-plugin</artifactId>\n", "<artifactId>maven-surefire-plugin</artifactId>\n        <configuration>\n          <excludes><exclude>**/GreeterTest.java</exclude></excludes>\n        </configuration>\n"))},
			want:  []string{"test_skipped pom.xml:21"},
		},
		"java/skipTests property": {
			files: []File{mod("pom.xml", pom1, replace(pom1, "<properties>\n", "<properties>\n    <skipTests>true</skipTests>\n"))},
			want:  []string{"test_skipped pom.xml:6"},
		},
		"java/another plugin's skip is not a test setting": {
			files: []File{mod("pom.xml", pom1, replace(pom1, "<artifactId>maven-deploy-plugin</artifactId>\n", "<artifactId>maven-deploy-plugin</artifactId>\n        <configuration><skip>true</skip></configuration>\n"))},
		},
	}
}

const pom1 = `
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>app</groupId>
  <artifactId>greeter</artifactId>
  <properties>
    <maven.compiler.release>21</maven.compiler.release>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>5.10.0</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
      </plugin>
      <plugin>
        <artifactId>maven-deploy-plugin</artifactId>
      </plugin>
    </plugins>
  </build>
</project>
`

func TestJava(t *testing.T) { golden(t, "java", runCases(t, javaCases())) }
