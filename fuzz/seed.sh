#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seeds from files the repository already has (the corpus folder
# is not committed): the bundled demo traces and shader, the real shader binaries and sources
# under shader-unit/tests/fixtures/real (provenance: that folder's PROVENANCE.md), the ctrulib
# command list under pica-cmd/tests/fixtures, and every minimised input under
# tests/fixtures/hostile/ and tests/data/fuzz/. The `replay` and `linter` targets get the small
# seed traces (tests/data/fuzz/replay-seed-*.ctf, built by tests/tests/hostile_seeds.rs) and the
# replay-* regression inputs of up to 32 KB, not the 80-500 KB demo traces or demo mutants: those cost tens of milliseconds
# per execution, and the small seeds reach the same stages. Set FUZZ_BIG_SEEDS=1 to add the
# demos to them as well. Optional: $1 = a testdata folder to add (e.g. ../shared/testdata/real).
set -euo pipefail
cd "$(dirname "$0")/.."
for t in dvlb asm cmdlist citrace replay linter; do mkdir -p "fuzz/corpus/$t"; done
copy() { cp -n "$2" "fuzz/corpus/$1/$(sha1sum "$2" | cut -c1-16)" 2>/dev/null || true; }
extra="${1:-}"
for f in $(find assets shader-unit/tests/fixtures pica-cmd/tests/fixtures tests/fixtures/hostile $extra -type f 2>/dev/null); do
  case "$f" in
    *.shbin) copy dvlb "$f" ;;
    *.pica|*.vsh) copy asm "$f" ;;
    *.ctf)
      copy citrace "$f"
      if [ -n "${FUZZ_BIG_SEEDS:-}" ]; then copy replay "$f"; copy linter "$f"; fi ;;
    *cmdlist*.bin|*.cmd) copy cmdlist "$f" ;;
  esac
done
for f in tests/fixtures/hostile/* tests/data/fuzz/*; do
  [ -f "$f" ] || continue
  case "$(basename "$f")" in
    dvlb-*) copy dvlb "$f" ;; asm-*) copy asm "$f" ;;
    cmdlist-*) copy cmdlist "$f" ;; citrace-*) copy citrace "$f" ;;
    replay-*|linter-*)
      copy citrace "$f"
      # Large regression traces (demo mutants) stay out unless asked for: at nice 19 on a
      # loaded machine they run for seconds and swamp the corpus (see tests/fixtures/hostile).
      if [ "$(stat -c %s "$f")" -le 32768 ] || [ -n "${FUZZ_BIG_SEEDS:-}" ]; then
        copy replay "$f"; copy linter "$f"
      fi ;;
  esac
done
for t in dvlb asm cmdlist citrace replay linter; do echo "$t: $(ls "fuzz/corpus/$t" | wc -l) seeds"; done
