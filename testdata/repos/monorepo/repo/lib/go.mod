module example.com/mono/lib

go 1.22
