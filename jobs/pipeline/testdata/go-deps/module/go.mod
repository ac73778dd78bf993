module example.com/textcase

go 1.22
