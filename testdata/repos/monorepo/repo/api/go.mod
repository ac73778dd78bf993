module example.com/mono/api

go 1.22

require example.com/mono/lib v0.0.0

replace example.com/mono/lib => ../lib
