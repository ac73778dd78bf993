module example.com/dual

go 1.22
