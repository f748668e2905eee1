module ember

go 1.26
