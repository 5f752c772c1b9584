# imexprobe ladder: hides device entries from one worker, as a container runtime does, then runs it.
# Runs as `unshare --mount --propagation private -- /bin/sh -c <this> isolate STAGE OP... -- COMMAND...`, so
# every mount below lives and dies with the worker's private mount namespace; the host sees none of them.
#   hide DIR N NAME...    replace DIR by a view holding every entry of DIR except the N names (a tmpfs whose
#                         entries are bind mounts of the originals, so everything else keeps working)
#   param FILE KEY VALUE  bind a copy of FILE with the line "KEY: ..." set to "KEY: VALUE" over FILE
#                         (/proc/driver/nvidia/params ModifyDeviceFiles 0, as libnvidia-container does, so the
#                         driver does not re-create the device nodes we hid)
# Fails (exit 97, one line on stderr) rather than run the worker half-isolated.
set -eu
fail() { echo "imexprobe isolate: $*" >&2; exit 97; }
stage=$1; shift
mount -t tmpfs -o mode=0755,size=1m imexprobe-ladder "$stage" || fail "cannot mount a tmpfs on $stage"
n=0
while [ $# -gt 0 ]; do
  op=$1; shift
  case $op in
    --) break ;;
    hide)
      dir=$1; count=$2; shift 2
      [ -d "$dir" ] || fail "$dir is not a directory"
      hidden=/
      i=0
      while [ "$i" -lt "$count" ]; do hidden="$hidden$1/"; shift; i=$((i + 1)); done
      n=$((n + 1)); view=$stage/view$n
      mkdir "$view"
      chmod "$(stat -c %a "$dir")" "$view"
      for entry in "$dir"/* "$dir"/.[!.]* "$dir"/..?*; do
        [ -e "$entry" ] || [ -L "$entry" ] || continue
        name=${entry##*/}
        case $hidden in *"/$name/"*) continue ;; esac
        if [ -L "$entry" ]; then
          ln -s "$(readlink "$entry")" "$view/$name"
        elif [ -d "$entry" ]; then
          mkdir "$view/$name"; mount --rbind "$entry" "$view/$name" || fail "cannot bind $entry"
        else
          : > "$view/$name"; mount --bind "$entry" "$view/$name" || fail "cannot bind $entry"
        fi
      done
      mount --rbind "$view" "$dir" || fail "cannot mount the view over $dir" ;;
    param)
      file=$1; key=$2; value=$3; shift 3
      n=$((n + 1)); copy=$stage/param$n
      sed "s/^$key:.*/$key: $value/" "$file" > "$copy" || fail "cannot read $file"
      mount --bind "$copy" "$file" || fail "cannot bind a copy over $file" ;;
    *) fail "unknown operation '$op'" ;;
  esac
done
exec "$@"
