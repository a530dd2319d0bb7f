# Sourced by the benchmark scripts that measure under load (bench-player.sh,
# match-under-load.sh): the processor named with its vector units, and one busy-looping process
# per core started and stopped (stopped on any exit of the script that sources this).

cores=$(nproc)

# The processor, and which of its vector units libtorch may use.
describe_cpu() {
    local model units
    model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
    units=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|amx_tile)$' | tr '\n' ' ' || true)
    echo "CPU: $model; $cores cores; vector units: ${units:-none of AVX2, AVX-512, AMX}"
}

busy=()
start_busy() {
    for _ in $(seq "$cores"); do
        (while :; do :; done) &
        busy+=($!)
    done
}
stop_busy() {
    if ((${#busy[@]})); then
        kill "${busy[@]}" 2>/dev/null || true
        wait "${busy[@]}" 2>/dev/null || true
        busy=()
    fi
}
trap stop_busy EXIT
