package findings

import (
	"fmt"
	"strings"
	"testing"
)

const goMod1 = `
module example.com/greet

go 1.23

require (
	github.com/google/uuid v1.6.0
	golang.org/x/text v0.14.0 // indirect
)
`

const goSum1 = `
github.com/google/uuid v1.6.0 h1:NIvaJDMOsjHA8n1jAhLSgzrAzy1Hgr+hNrb57e+94F0=
github.com/google/uuid v1.6.0/go.mod h1:TIyPZe4MgqvfeYDBFedMoGGpEw/LqOeaOT+nhxU+yHo=
`

const packageJSON1 = `
{
  "name": "app",
  "dependencies": {
    "express": "^4.18.0"
  },
  "devDependencies": {
    "jest": "^29.0.0"
  }
}
`

const cargo1 = `
[package]
name = "greet"
version = "0.1.0"

[dependencies]
serde = "1.0"
`

func depCases() map[string]analysisCase {
	many := strings.Builder{}
	for i := range 25 {
		fmt.Fprintf(&many, "pkg%02d==1.0\n", i)
	}
	return map[string]analysisCase{
		"deps/go.mod new module": {
			files: []File{mod("go.mod", goMod1, replace(goMod1, "\tgithub.com/google/uuid v1.6.0\n", "\tgithub.com/google/uuid v1.6.0\n\tgithub.com/spf13/cobra v1.8.0\n"))},
			want:  []string{"new_dependency go.mod:7"},
		},
		"deps/go.mod bump the issue asked for": {
			title: "Bump github.com/google/uuid to v1.6.1",
			files: []File{mod("go.mod", goMod1, replace(goMod1, "uuid v1.6.0", "uuid v1.6.1"))},
			want:  []string{"new_dependency go.mod:6"},
		},
		"deps/package the issue asks for": {
			title: "Use left-pad for the padding",
			files: []File{mod("package.json", packageJSON1, replace(packageJSON1, "\"jest\": \"^29.0.0\"\n", "\"jest\": \"^29.0.0\",\n    \"left-pad\": \"1.3.0\"\n"))},
			want:  []string{"new_dependency package.json:8"},
		},
		"deps/look-alike of the package the issue asks for": {
			title: "Use left-pad for the padding",
			files: []File{mod("package.json", packageJSON1, replace(packageJSON1, "\"jest\": \"^29.0.0\"\n", "\"jest\": \"^29.0.0\",\n    \"left-pads\": \"1.3.0\"\n"))},
			want:  []string{"new_dependency package.json:8"},
		},
		"deps/go.mod replace added": {
			files: []File{mod("go.mod", goMod1, goMod1+"\nreplace github.com/google/uuid => github.com/g00gle/uuid v1.6.0\n")},
			want:  []string{"new_dependency go.mod:10"},
		},
		"deps/go.mod dependency removed": {
			files: []File{mod("go.mod", goMod1, replace(goMod1, "\tgolang.org/x/text v0.14.0 // indirect\n", ""))},
		},
		"deps/go.mod only the go line changed": {
			files: []File{mod("go.mod", goMod1, replace(goMod1, "go 1.23", "go 1.24"))},
		},
		"deps/go.sum lists what go.mod does not": {
			files: []File{
				mod("go.mod", goMod1, replace(goMod1, "\tgithub.com/google/uuid v1.6.0\n", "\tgithub.com/google/uuid v1.6.0\n\tgithub.com/spf13/cobra v1.8.0\n")),
				mod("go.sum", goSum1, goSum1+"github.com/spf13/cobra v1.8.0 h1:7aJaZx1B85qltLMc546zn58BxxfZdR/W22ej9CFoEf0=\ngithub.com/spf13/cobra v1.8.0/go.mod h1:WXLWApfZ71AjXPya3WOlMsY9yMs7YeiHhFVlvLyhcho=\ngithub.com/spf13/pflag v1.0.5 h1:iy+VFUOCP1a+8yFto/drg2CJ5u0yRoB7fZw3DKv/JXA=\n"),
			},
			want: []string{"new_dependency go.mod:7", "new_dependency go.sum:5"},
		},
		"deps/package.json new devDependency": {
			files: []File{mod("package.json", packageJSON1, replace(packageJSON1, "\"jest\": \"^29.0.0\"\n", "\"jest\": \"^29.0.0\",\n    \"left-pad\": \"1.3.0\"\n"))},
			want:  []string{"new_dependency package.json:8"},
		},
		"deps/package.json bump": {
			files: []File{mod("package.json", packageJSON1, replace(packageJSON1, "^4.18.0", "^4.19.2"))},
			want:  []string{"new_dependency package.json:4"},
		},
		"deps/package.json name changed only": {
			files: []File{mod("package.json", packageJSON1, replace(packageJSON1, `"name": "app"`, `"name": "app2"`))},
		},
		"deps/package-lock transitive package": {
			files: []File{mod("package-lock.json",
				"{\n  \"lockfileVersion\": 3,\n  \"packages\": {\n    \"\": {\"name\": \"app\"},\n    \"node_modules/express\": {\"version\": \"4.18.0\"}\n  }\n}\n",
				"{\n  \"lockfileVersion\": 3,\n  \"packages\": {\n    \"\": {\"name\": \"app\"},\n    \"node_modules/express\": {\"version\": \"4.18.0\"},\n    \"node_modules/express/node_modules/qs\": {\"version\": \"6.11.0\"}\n  }\n}\n")},
			want: []string{"new_dependency package-lock.json:6"},
		},
		"deps/package-lock v1": {
			files: []File{mod("package-lock.json",
				"{\n  \"lockfileVersion\": 1,\n  \"dependencies\": {\n    \"express\": {\"version\": \"4.18.0\"}\n  }\n}\n",
				"{\n  \"lockfileVersion\": 1,\n  \"dependencies\": {\n    \"express\": {\"version\": \"4.18.1\", \"dependencies\": {\"qs\": {\"version\": \"6.11.0\"}}}\n  }\n}\n")},
			want: []string{"new_dependency package-lock.json:4", "new_dependency package-lock.json:4"},
		},
		"deps/yarn.lock classic": {
			files: []File{mod("yarn.lock",
				"# yarn lockfile v1\n\nexpress@^4.18.0:\n  version \"4.18.0\"\n",
				"# yarn lockfile v1\n\nexpress@^4.18.0:\n  version \"4.18.0\"\n\n\"@types/node@^20.0.0\", \"@types/node@^20.1.0\":\n  version \"20.1.2\"\n")},
			want: []string{"new_dependency yarn.lock:6"},
		},
		"deps/yarn.lock berry": {
			files: []File{mod("yarn.lock",
				"__metadata:\n  version: 8\n\n\"express@npm:^4.18.0\":\n  version: 4.18.0\n",
				"__metadata:\n  version: 8\n\n\"express@npm:^4.18.0\":\n  version: 4.19.0\n")},
			want: []string{"new_dependency yarn.lock:4"},
		},
		"deps/pnpm-lock v9": {
			files: []File{mod("pnpm-lock.yaml",
				"lockfileVersion: '9.0'\npackages:\n  express@4.18.0:\n    resolution: {integrity: sha512-x}\n",
				"lockfileVersion: '9.0'\npackages:\n  express@4.18.0:\n    resolution: {integrity: sha512-x}\n  '@babel/core@7.24.0(supports-color@8.1.1)':\n    resolution: {integrity: sha512-y}\n")},
			want: []string{"new_dependency pnpm-lock.yaml:5"},
		},
		"deps/requirements.txt new and VCS": {
			files: []File{mod("requirements.txt", "requests==2.31.0\n", "requests==2.31.0\nreqeusts==1.0  # look-alike\ngit+https://github.com/x/y.git#egg=y\n-r other.txt\n")},
			want:  []string{"new_dependency requirements.txt:2", "new_dependency requirements.txt:3"},
		},
		"deps/requirements-dev.txt bump": {
			files: []File{mod("requirements-dev.txt", "pytest>=7\n", "pytest>=8 ; python_version >= \"3.9\"\n")},
			want:  []string{"new_dependency requirements-dev.txt:1"},
		},
		"deps/pyproject project and poetry": {
			files: []File{mod("pyproject.toml",
				"[project]\nname = \"app\"\ndependencies = [\"requests>=2\"]\n",
				"[project]\nname = \"app\"\ndependencies = [\"requests>=2\", \"Flask[async]>=3.0\"]\n\n[tool.poetry.group.dev.dependencies]\nblack = {version = \"^24.1\"}\n")},
			want: []string{"new_dependency pyproject.toml:3", "new_dependency pyproject.toml:6"},
		},
		"deps/poetry.lock": {
			files: []File{mod("poetry.lock",
				"[[package]]\nname = \"requests\"\nversion = \"2.31.0\"\n",
				"[[package]]\nname = \"requests\"\nversion = \"2.31.0\"\n\n[[package]]\nname = \"urllib3\"\nversion = \"2.2.1\"\n")},
			want: []string{"new_dependency poetry.lock:6"},
		},
		"deps/Cargo.toml new crate from git": {
			files: []File{mod("Cargo.toml", cargo1, cargo1+"tokio = { git = \"https://github.com/tokio-rs/tokio\", tag = \"v1.0\" }\n\n[dev-dependencies]\nproptest = \"1\"\n")},
			want:  []string{"new_dependency Cargo.toml:7", "new_dependency Cargo.toml:10"},
		},
		"deps/Cargo.lock new package": {
			files: []File{mod("Cargo.lock",
				"version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.197\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
				"version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.197\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"serde_json\"\nversion = \"1.0.114\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n")},
			want: []string{"new_dependency Cargo.lock:9"},
		},
		"deps/Cargo.lock workspace member bumped": {
			files: []File{mod("Cargo.lock",
				"version = 3\n\n[[package]]\nname = \"greet\"\nversion = \"0.1.0\"\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.197\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
				"version = 3\n\n[[package]]\nname = \"greet\"\nversion = \"0.2.0\"\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.198\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n")},
			want: []string{"new_dependency Cargo.lock:8"},
		},
		"deps/uv.lock project itself": {
			files: []File{mod("uv.lock",
				"version = 1\n\n[[package]]\nname = \"app\"\nversion = \"1.0\"\nsource = { editable = \".\" }\n",
				"version = 1\n\n[[package]]\nname = \"app\"\nversion = \"1.1\"\nsource = { editable = \".\" }\n\n[[package]]\nname = \"idna\"\nversion = \"3.7\"\nsource = { registry = \"https://pypi.org/simple\" }\n")},
			want: []string{"new_dependency uv.lock:9"},
		},
		"deps/Cargo.toml dotted table": {
			files: []File{mod("Cargo.toml", cargo1, cargo1+"\n[target.'cfg(windows)'.dependencies.winapi]\nversion = \"0.3\"\n")},
			want:  []string{"new_dependency Cargo.toml:8"},
		},
		"deps/pom.xml new dependency": {
			files: []File{mod("pom.xml", pom1, replace(pom1, "  </dependencies>\n", "    <dependency>\n      <groupId>com.google.guava</groupId>\n      <artifactId>guava</artifactId>\n      <version>33.0.0-jre</version>\n    </dependency>\n  </dependencies>\n"))},
			want:  []string{"new_dependency pom.xml:15"},
		},
		"deps/pom.xml plugin bump": {
			files: []File{mod("pom.xml", pom1, replace(pom1, "<artifactId>maven-deploy-plugin</artifactId>\n", "<artifactId>maven-deploy-plugin</artifactId>\n        <version>3.1.1</version>\n"))},
			want:  []string{"new_dependency pom.xml:21"},
		},
		"deps/new manifest caps its list": {
			files: []File{add("requirements.txt", many.String())},
			want: func() []string {
				var w []string
				for i := range 20 {
					w = append(w, fmt.Sprintf("new_dependency requirements.txt:%d", i+1))
				}
				return append([]string{"new_dependency requirements.txt:0"}, w...)
			}(),
		},
		"deps/Gemfile new gem": {
			files: []File{mod("Gemfile", "source \"https://rubygems.org\"\n\ngem \"rspec\", \"~> 3.12\"\n",
				"source \"https://rubygems.org\"\n\ngem \"rspec\", \"~> 3.12\"\ngem 'httparty'\n")},
			want: []string{"new_dependency Gemfile:4"},
		},
		"deps/Gemfile.lock transitive gem": {
			files: []File{mod("Gemfile.lock", "GEM\n  remote: https://rubygems.org/\n  specs:\n    rspec (3.12.0)\n      rspec-core (~> 3.12.0)\n",
				"GEM\n  remote: https://rubygems.org/\n  specs:\n    mini_mime (1.1.5)\n    rspec (3.12.0)\n      rspec-core (~> 3.12.0)\n")},
			want: []string{"new_dependency Gemfile.lock:4"},
		},
		"deps/composer.json new package, platform ignored": {
			files: []File{mod("composer.json", `{"require": {"php": ">=8.1"}}`, "{\"require\": {\"php\": \">=8.2\",\n \"ext-json\": \"*\",\n \"guzzlehttp/guzzle\": \"^7.8\"}}")},
			want:  []string{"new_dependency composer.json:3"},
		},
		"deps/composer.lock bump": {
			files: []File{mod("composer.lock", `{"packages": [{"name": "monolog/monolog", "version": "3.5.0"}]}`, `{"packages": [{"name": "monolog/monolog", "version": "3.6.0"}]}`)},
			want:  []string{"new_dependency composer.lock:1"},
		},
		"deps/build.gradle new test dependency": {
			files: []File{mod("build.gradle", "dependencies {\n    testImplementation 'junit:junit:4.13.2'\n}\n",
				"plugins {\n    id 'java'\n}\ndependencies {\n    testImplementation 'junit:junit:4.13.2'\n    implementation(\"com.google.guava:guava:33.0.0-jre\")\n}\n")},
			want: []string{"new_dependency build.gradle:6"},
		},
		"deps/deleted lockfile": {
			files: []File{del("yarn.lock", "express@^4.18.0:\n  version \"4.18.0\"\n")},
		},
	}
}

func TestDependencies(t *testing.T) { golden(t, "dependencies", runCases(t, depCases())) }

func TestPnpmKeys(t *testing.T) {
	lock := "lockfileVersion: 5.4\npackages:\n  /string_decoder/1.3.0:\n    resolution: {}\n  /@babel/core/7.0.0_supports-color@8.1.1:\n    resolution: {}\n  /left-pad@1.3.0(react@18.0.0):\n    resolution: {}\n  string_decoder@1.1.1:\n    resolution: {}\n"
	got := pnpmLockDeps([]byte(lock))
	for _, k := range []string{"string_decoder@1.3.0", "@babel/core@7.0.0", "left-pad@1.3.0", "string_decoder@1.1.1"} {
		if _, ok := got[k]; !ok {
			t.Errorf("missing %s in %v", k, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("got %d entries: %v", len(got), got)
	}
}

func TestRequirementsLines(t *testing.T) {
	got := requirementsDeps([]byte("-e .\n--index-url https://pypi.example/simple\nDjango_Rest.framework[x]>=3 ; python_version<'3.9'\n-e git+https://github.com/x/y.git#egg=y\n# c\n\n--trusted-host pypi.example\n-f ./wheels\n-r other.txt\n"))
	want := map[string]string{"django-rest-framework": ">=3", "-e git+https://github.com/x/y.git#egg=y": "", "--index-url https://pypi.example/simple": "",
		"--trusted-host pypi.example": "", "-f ./wheels": ""}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
	for k, v := range want {
		if d, ok := got[k]; !ok || d.Version != v {
			t.Errorf("%s: got %+v (%v)", k, d, ok)
		}
	}
}
