# Shared by scripts/startup-time.sh and scripts/first-run.sh (sourced): starting a server under test and knowing when it
# answers.

# A free TCP port on 127.0.0.1.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_for_pong PORT PID START_NS: polls the port until a CONNECT + PING gets its PONG; gives up (killing PID) 30 s
# after START_NS (date +%s%N when the server was launched).
wait_for_pong() {
  local port=$1 pid=$2 start=$3
  while :; do
    if { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
      printf 'CONNECT {"verbose":false}\r\nPING\r\n' >&3
      if timeout 5 grep -q -m1 PONG <&3; then
        exec 3>&-
        return 0
      fi
      exec 3>&-
    fi
    if (( ($(date +%s%N) - start) > 30000000000 )); then echo "no PONG within 30 s" >&2; kill "$pid"; return 1; fi
    sleep 0.005
  done
}

# The median of the integers on standard input, one a line.
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2)}'; }
