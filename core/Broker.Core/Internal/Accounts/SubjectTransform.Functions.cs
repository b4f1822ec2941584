using System.Globalization;
using System.Text.RegularExpressions;

namespace Broker.Core.Internal.Accounts;

/// <summary>Reading a destination token: <c>$N</c> or one of nats-server 2.9's <c>{{function(...)}}</c> placeholders.</summary>
internal sealed partial class SubjectTransform
{
    // In nats-server's order of trial (indexPlaceHolders); ValidateDestination accepts a token any of them matches.
    private static readonly (Kind Kind, Regex Pattern)[] Functions =
    [
        (Kind.Wildcard, Function("[wW]ildcard")),
        (Kind.Partition, Function("[pP]artition")),
        (Kind.SplitFromLeft, Function("[sS]plit[fF]rom[lL]eft")),
        (Kind.SplitFromRight, Function("[sS]plit[fF]rom[rR]ight")),
        (Kind.SliceFromLeft, Function("[sS]lice[fF]rom[lL]eft")),
        (Kind.SliceFromRight, Function("[sS]lice[fF]rom[rR]ight")),
        (Kind.Split, Function("[sS]plit")),
    ];

    private static readonly Regex ArgumentSeparator = new(",[\\t\\n\\f\\r ]*", RegexOptions.CultureInvariant);

    private static Regex Function(string name)
        => new(@"\{\{" + Space + name + Space + @"\((.*)\)" + Space + @"\}\}", RegexOptions.CultureInvariant);

    // nats-server's indexPlaceHolders: the kind, the wildcard numbers it reads, its number argument and its text argument.
    private static (Kind Kind, long[] Wildcards, int Number, string Text) Placeholder(string token)
    {
        if (token.Length <= 1)
        {
            return (Kind.Literal, [], -1, "");
        }

        if (token[0] == '$')
        {
            // Other uses rely on tokens starting with '$': one that is not a number stays as written.
            return TryInteger(token[1..], out var wildcard) ? (Kind.Wildcard, [wildcard], -1, "") : (Kind.Literal, [], -1, "");
        }

        if (!IsFunctionToken(token))
        {
            return (Kind.Literal, [], -1, "");
        }

        foreach (var (kind, pattern) in Functions)
        {
            var match = pattern.Match(token);
            if (match.Success)
            {
                return Arguments(kind, token, ArgumentSeparator.Split(match.Groups[1].Value));
            }
        }

        throw Refused("unknown function", token);
    }

    private static (Kind Kind, long[] Wildcards, int Number, string Text) Arguments(Kind kind, string token, string[] args)
    {
        switch (kind)
        {
            case Kind.Wildcard:
                if (args.Length == 1 && args[0].Length == 0)
                {
                    throw NotEnough(token);
                }

                if (args.Length > 1)
                {
                    throw TooMany(token);
                }

                return (kind, [Integer(token, args[0])], -1, "");

            case Kind.Partition:
                if (args.Length < 2)
                {
                    throw NotEnough(token);
                }

                var partitions = Integer(token, args[0]);
                var wildcards = new long[args.Length - 1];
                for (var i = 1; i < args.Length; i++)
                {
                    wildcards[i - 1] = Integer(token, args[i]);
                }

                return (kind, wildcards, unchecked((int)partitions), "");

            case Kind.Split:
                CheckCount(token, args);
                var wildcard = Integer(token, args[0]);
                if (args[1].Contains(' ', StringComparison.Ordinal) || args[1].Contains('.', StringComparison.Ordinal))
                {
                    throw Invalid(token);
                }

                return (kind, [wildcard], -1, args[1]);

            default:
                CheckCount(token, args);
                return (kind, [Integer(token, args[0])], unchecked((int)Integer(token, args[1])), "");
        }
    }

    private static void CheckCount(string token, string[] args)
    {
        if (args.Length < 2)
        {
            throw NotEnough(token);
        }

        if (args.Length > 2)
        {
            throw TooMany(token);
        }
    }

    // Go's strconv.Atoi after trimming spaces: an optional sign and decimal digits.
    private static long Integer(string token, string text)
        => TryInteger(text.Trim(' '), out var value) ? value : throw Invalid(token);

    private static bool TryInteger(string text, out long value)
        => long.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out value);

    private static InvalidOperationException NotEnough(string token) => Refused("not enough arguments passed to the function", token);

    private static InvalidOperationException TooMany(string token) => Refused("too many arguments passed to the function", token);

    private static InvalidOperationException Invalid(string token) => Refused("function argument is invalid or in the wrong format", token);
}
