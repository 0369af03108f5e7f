package complete

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Shells are the shells `kubeevents completion` writes scripts for, with the file each
// script has in completions/ (see `make completions`).
var Shells = []struct{ Name, File string }{
	{"bash", "kubeevents.bash"},
	{"zsh", "_kubeevents"},
	{"fish", "kubeevents.fish"},
	{"powershell", "kubeevents.ps1"},
}

// Script writes root's completion script for shell.
func Script(root *cobra.Command, shell string, w io.Writer, descriptions bool) error {
	switch shell {
	case "bash":
		var script bytes.Buffer
		if err := root.GenBashCompletionV2(&script, descriptions); err != nil {
			return err
		}
		patched, err := patchBashCompletion(script.String(), root.Name())
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, patched)
		return err
	case "zsh":
		if descriptions {
			return root.GenZshCompletion(w)
		}
		return root.GenZshCompletionNoDesc(w)
	case "fish":
		return root.GenFishCompletion(w, descriptions)
	case "powershell":
		if descriptions {
			return root.GenPowerShellCompletionWithDesc(w)
		}
		return root.GenPowerShellCompletion(w)
	}
	return fmt.Errorf("no completion for shell %q; use bash, zsh, fish or powershell", shell)
}

// patchBashCompletion fixes what cobra's bash script (v1.10) gets wrong for the --sink
// and type-list completions in bash 5 with bash-completion:
//   - with descriptions, it escapes each candidate with printf %q before comparing it
//     with the word typed, so "pods,secrets" (escaped "pods\,secrets") never matches
//     "pods,s", nor "file(format=" matches "file(";
//   - a word with a quote still open (--sink 'file(<TAB>) is passed to eval
//     unterminated, so the program is never asked; and inside a quote, readline
//     replaces only what follows the quote, while cobra strips what comes before a '='.
//
// The patched script completes a quoted word by its unquoted value, asks the program
// with the quote closed, inserts inside the quote (keeping it open after a partial
// candidate such as max-size=), and escapes a single candidate only where bash needs
// it. Each change must apply exactly once: a cobra whose script differs fails here (and
// in the unit tests), not in a user's shell.
func patchBashCompletion(script, name string) (string, error) {
	changes := []struct{ old, new string }{{
		// Ask with the quote closed.
		` ${args[*]}"
`,
		` ${args[*]}${quote}"
`,
	}, {
		// "Nothing typed yet" is about the word as typed, not its unquoted value.
		`if [[ -z ${cur} && ${lastChar} != = ]]; then`,
		`if [[ -z ${lastParam} && ${lastChar} != = ]]; then`,
	}, {
		// Match the candidate as typed, not only escaped.
		`[[ $comp == "$cur"* ]] || continue`,
		`[[ $comp == "$cur"* || ${compline%%$tab*} == "$cur"* ]] || continue`,
	}, {
		`COMPREPLY[0]=$(printf "%q" "${COMPREPLY[0]}")`,
		`COMPREPLY[0]=$(__NAME_quote "${COMPREPLY[0]}")`,
	}, {
		`COMPREPLY[0]=$(printf "%q" "${COMPREPLY[0]%%$tab*}")`,
		`COMPREPLY[0]=$(__NAME_quote "${COMPREPLY[0]%%$tab*}")`,
	}, {
		`    __NAME_debug "Truncated words[*]: ${words[*]},"
`,
		`    __NAME_debug "Truncated words[*]: ${words[*]},"

    # kubeevents: a word with quotes is completed by its unquoted value.
    local quote= uq= qprefix=
    if [[ ${cur} == *[\'\"]* ]]; then
        __NAME_unquote "$cur"
        cur=$uq
    fi
`,
	}, {
		`__NAME_handle_special_char()
{
`,
		`# kubeevents: __NAME_unquote sets uq to the value of the word $1 (quotes and
# backslashes removed), quote to the quote it leaves open (if any) and qprefix to the
# value before that quote: readline replaces only what follows it.
__NAME_unquote() {
    local w=$1 c i
    for ((i = 0; i < ${#w}; i++)); do
        c=${w:i:1}
        if [[ -n $quote ]]; then
            if [[ $c == "$quote" ]]; then
                quote=
                continue
            fi
            if [[ $quote == \" && $c == \\ ]]; then
                ((i++))
                c=${w:i:1}
            fi
        elif [[ $c == [\'\"] ]]; then
            quote=$c
            qprefix=$uq
            continue
        elif [[ $c == \\ ]]; then
            ((i++))
            c=${w:i:1}
        fi
        uq+=$c
    done
    [[ -n $quote ]] || qprefix=
}

# kubeevents: a single candidate goes onto the command line as it is where bash allows
# (printf %q also escapes ',' and '='), escaped otherwise; inside an open quote as it is,
# and with the quote closed and opened again when more is to be typed (max-size=''),
# since readline would close it.
__NAME_quote() {
    if [[ -n ${quote-} ]]; then
        if (((directive & 2) != 0)) && [[ $1 != "$uq" ]]; then
            printf "%s" "$1$quote$quote"
        else
            printf "%s" "$1"
        fi
    elif [[ $1 != *[!A-Za-z0-9._/:=,@%+-]* ]]; then
        printf "%s" "$1"
    else
        printf "%q" "$1"
    fi
}

__NAME_handle_special_char()
{
    # kubeevents: inside a quote, '=' and ':' do not split words; readline replaces what
    # follows the quote.
    if [[ -n ${quote-} ]]; then
        if [[ $2 == : && -n $qprefix ]]; then
            local idx=${#COMPREPLY[*]}
            while ((--idx >= 0)); do
                COMPREPLY[idx]=${COMPREPLY[idx]#"$qprefix"}
            done
        fi
        return
    fi
`,
	}}
	for _, c := range changes {
		old, new := strings.ReplaceAll(c.old, "__NAME_", "__"+name+"_"), strings.ReplaceAll(c.new, "__NAME_", "__"+name+"_")
		if n := strings.Count(script, old); n != 1 {
			return "", fmt.Errorf("cannot patch cobra's bash completion script: %q found %d times, want once", old, n)
		}
		script = strings.Replace(script, old, new, 1)
	}
	return script, nil
}
