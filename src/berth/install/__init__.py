"""Install: chart -> package -> wizard -> real Helm render -> split -> lifecycle plan -> apply | script."""
