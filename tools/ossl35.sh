# tools/ossl35.sh - sourced by the scripts that run Debian 13's OpenSSL 3.5
# as tools/openssl35.sh DIR unpacks it (into DIR/root).
#
# ossl35_run ROOT: in the array OSSL35_RUN, the command prefix that runs a
# program against the 3.5 unpacked at ROOT: its own dynamic loader and
# libraries, since Debian 13's libraries need its C library (so does a
# program of Debian 12's, HAProxy say, that is to run on 3.5's libcrypto).
ossl35_run() {
    OSSL35_RUN=("$1/usr/lib64/ld-linux-x86-64.so.2" --library-path "$1/usr/lib/x86_64-linux-gnu")
}
