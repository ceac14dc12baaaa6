# bash completion for hgfs. Install as
# /usr/share/bash-completion/completions/hgfs (or source it).
#
# The commands and options come from hgfs itself (hgfs debugcomplete, as
# hg's completion asks hg), so they never drift from "hgfs help".

_hgfs() {
	local cur cmd i
	cur=${COMP_WORDS[COMP_CWORD]}
	cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		-R | --repository | --repo | --cwd | --config) ((i++)) ;;
		-*) ;;
		*)
			cmd=${COMP_WORDS[i]}
			break
			;;
		esac
	done
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" debugcomplete -o $cmd 2>/dev/null)" -- "$cur"))
	elif [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" debugcomplete "$cur" 2>/dev/null)" -- "$cur"))
	elif [[ $cmd == cache && $i == $((COMP_CWORD - 1)) ]]; then
		COMPREPLY=($(compgen -W "list rm prune gc" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _hgfs hgfs
