package tools

import (
	"fmt"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	big := strings.Repeat("line\n", 3000)
	files := map[string]string{
		"main.go":           mainGo,
		"crlf.txt":          "a\r\nb\r\n",
		"nonl.txt":          "x\ny",
		"empty.txt":         "",
		"big.txt":           big,
		"bin.dat":           "ELF\x00\x01\x02",
		".env":              "TOKEN=secret",
		"config/.env.prod":  "TOKEN=secret",
		"keys/id_rsa":       "-----BEGIN",
		"cert.pem":          "-----BEGIN",
		"etc":               "->/etc",
		"passwd":            "->/etc/passwd",
		"up":                "->../../..",
		"alias.txt":         "->.env",
		"loop":              "->loop",
		"dir/inner.txt":     "inner\n",
		"dir/sub/deep.txt":  "deep\n",
		".git/config":       "[core]",
		"notes/credentials": "user:pass",
	}
	tests := map[string]struct {
		args any
		code Code
		want []string // substrings of the text
		not  []string
	}{
		"whole file numbered":  {args: ReadFileParams{Path: "main.go"}, want: []string{"main.go: lines 1-9 of 9\n", "\n1\tpackage main\n", "\n4\t\treturn a - b\n"}},
		"range":                {args: ReadFileParams{Path: "main.go", StartLine: 3, EndLine: 4}, want: []string{"lines 3-4 of 9", "3\tfunc add", "4\t\treturn"}, not: []string{"package"}},
		"end past the end":     {args: ReadFileParams{Path: "main.go", StartLine: 8, EndLine: 50}, want: []string{"lines 8-9 of 9"}},
		"start past the end":   {args: ReadFileParams{Path: "main.go", StartLine: 10}, code: InvalidArguments},
		"start after end":      {args: ReadFileParams{Path: "main.go", StartLine: 5, EndLine: 2}, code: InvalidArguments},
		"negative":             {args: `{"path":"main.go","start_line":-1}`, code: InvalidArguments},
		"crlf shown plain":     {args: ReadFileParams{Path: "crlf.txt"}, want: []string{"CRLF", "1\ta\n"}, not: []string{"\r"}},
		"no final newline":     {args: ReadFileParams{Path: "nonl.txt"}, want: []string{"2\ty\n(no newline at end of file)"}},
		"empty":                {args: ReadFileParams{Path: "empty.txt"}, want: []string{"empty file"}},
		"too large":            {args: ReadFileParams{Path: "big.txt"}, code: TooLarge, want: []string{"start_line"}},
		"large file in ranges": {args: ReadFileParams{Path: "big.txt", StartLine: 2900, EndLine: 3000}, want: []string{"lines 2900-3000 of 3000"}},
		"binary":               {args: ReadFileParams{Path: "bin.dat"}, code: InvalidArguments, want: []string{"binary"}},
		"missing":              {args: ReadFileParams{Path: "nope.txt"}, code: NotFound},
		"missing dir":          {args: ReadFileParams{Path: "main.go/x"}, code: NotFound},
		"directory":            {args: ReadFileParams{Path: "dir"}, code: InvalidArguments},
		"nested":               {args: ReadFileParams{Path: "dir/sub/deep.txt"}, want: []string{"1\tdeep"}},
		"dot dot inside":       {args: ReadFileParams{Path: "dir/sub/../inner.txt"}, want: []string{"1\tinner"}},
		"../../etc/passwd":     {args: ReadFileParams{Path: "../../etc/passwd"}, code: PathDenied},
		"absolute":             {args: ReadFileParams{Path: "/etc/passwd"}, code: PathDenied},
		"symlink to /etc":      {args: ReadFileParams{Path: "etc/passwd"}, code: PathDenied},
		"symlink to passwd":    {args: ReadFileParams{Path: "passwd"}, code: PathDenied},
		"symlink climbing up":  {args: ReadFileParams{Path: "up/etc/passwd"}, code: PathDenied},
		"symlink to .env":      {args: ReadFileParams{Path: "alias.txt"}, code: PathDenied},
		"symlink loop":         {args: ReadFileParams{Path: "loop/x"}, code: PathDenied},
		".env":                 {args: ReadFileParams{Path: ".env"}, code: PathDenied},
		"nested .env.prod":     {args: ReadFileParams{Path: "config/.env.prod"}, code: PathDenied},
		"id_rsa":               {args: ReadFileParams{Path: "keys/id_rsa"}, code: PathDenied},
		"pem":                  {args: ReadFileParams{Path: "cert.pem"}, code: PathDenied},
		"credentials":          {args: ReadFileParams{Path: "notes/credentials"}, code: PathDenied},
		".git":                 {args: ReadFileParams{Path: ".git/config"}, code: PathDenied},
		"missing path":         {args: `{}`, code: InvalidArguments, want: []string{`"path"`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, files)
			res := env.call(t, "read_file", tc.args)
			wantCode(t, res, tc.code)
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, res.Text)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(res.Text, n) {
					t.Errorf("text has %q:\n%s", n, res.Text)
				}
			}
			if res.Code != "" && (strings.Contains(res.Text, "secret") && strings.Contains(res.Text, "TOKEN=") || strings.Contains(res.Text, "root:")) {
				t.Errorf("refusal leaks content:\n%s", res.Text)
			}
		})
	}
}

func TestListFiles(t *testing.T) {
	files := map[string]string{
		".gitignore":           "*.log\n/build/\n# comment\n\n!keep.log\n",
		"main.go":              "",
		"main_test.go":         "",
		"app.log":              "",
		"keep.log":             "",
		"build/out.bin":        "",
		"pkg/build/src.go":     "", // "/build/" is anchored to the root
		"pkg/a.go":             "",
		"pkg/.gitignore":       "gen/\nlocal.go\n",
		"pkg/gen/z.go":         "",
		"pkg/local.go":         "",
		"other/local.go":       "", // pkg's rule does not reach here
		"other/deep/x_test.go": "",
		".env":                 "S=1",
		"secrets/id_rsa":       "k",
		"server.key":           "k",
		".git/HEAD":            "ref",
		"link":                 "->/etc",
	}
	tests := map[string]struct {
		args any
		code Code
		want string
	}{
		"everything":                      {args: ListFilesParams{}, want: ".gitignore\nkeep.log\nmain.go\nmain_test.go\nother/deep/x_test.go\nother/local.go\npkg/.gitignore\npkg/a.go\npkg/build/src.go\n"},
		"subdirectory keeps parent rules": {args: ListFilesParams{Path: "pkg"}, want: "pkg/.gitignore\npkg/a.go\npkg/build/src.go\n"},
		"pattern by name at any depth":    {args: ListFilesParams{Pattern: "*_test.go"}, want: "main_test.go\nother/deep/x_test.go\n"},
		"pattern with a slash":            {args: ListFilesParams{Pattern: "pkg/**/*.go"}, want: "pkg/a.go\npkg/build/src.go\n"},
		"pattern relative to path":        {args: ListFilesParams{Path: "other", Pattern: "deep/*.go"}, want: "other/deep/x_test.go\n"},
		"no match":                        {args: ListFilesParams{Pattern: "*.rs"}, want: "no files match"},
		"bad pattern":                     {args: ListFilesParams{Pattern: "[a-"}, code: InvalidArguments},
		"missing dir":                     {args: ListFilesParams{Path: "nope"}, code: NotFound},
		"outside":                         {args: ListFilesParams{Path: ".."}, code: PathDenied},
		"symlink out":                     {args: ListFilesParams{Path: "link/ssh"}, code: PathDenied},
		"secret dir":                      {args: ListFilesParams{Path: ".git"}, code: PathDenied},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env := newEnv(t, files)
			res := env.call(t, "list_files", tc.args)
			wantCode(t, res, tc.code)
			if tc.code == "" && !strings.HasPrefix(res.Text, tc.want) {
				t.Errorf("got:\n%s\nwant:\n%s", res.Text, tc.want)
			}
		})
	}
}

func TestListFilesCap(t *testing.T) {
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%02d.txt", i)] = ""
	}
	env := newEnv(t, files, func(o *Options) { o.Limits.MaxListFiles = 10 })
	res := env.call(t, "list_files", ListFilesParams{})
	wantCode(t, res, "")
	lines := strings.Split(strings.TrimSpace(res.Text), "\n")
	if len(lines) != 11 || lines[9] != "f09.txt" || !strings.Contains(lines[10], "20 more files omitted") {
		t.Errorf("got:\n%s", res.Text)
	}
}
