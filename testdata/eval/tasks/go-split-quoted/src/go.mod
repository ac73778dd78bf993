module example.com/csvline

go 1.22
