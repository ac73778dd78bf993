module github.com/patchwright/patchwright

go 1.26.0
