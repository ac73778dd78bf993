module example.com/textstats

go 1.22
