package tools

import _ "embed"

// The descriptions the model reads, one Markdown file per tool, so they can
// be reviewed as prose.
var (
	//go:embed descriptions/list_files.md
	descListFiles string
	//go:embed descriptions/read_file.md
	descReadFile string
	//go:embed descriptions/search.md
	descSearch string
	//go:embed descriptions/edit.md
	descEdit string
	//go:embed descriptions/write_file.md
	descWriteFile string
	//go:embed descriptions/delete_file.md
	descDeleteFile string
	//go:embed descriptions/run.md
	descRun string
	//go:embed descriptions/verify.md
	descVerify string
	//go:embed descriptions/finish.md
	descFinish string
	//go:embed descriptions/fetch_dependencies.md
	descFetchDependencies string
	//go:embed descriptions/submit_plan.md
	descSubmitPlan string
)
