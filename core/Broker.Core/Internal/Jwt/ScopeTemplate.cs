using System.Text;
using Broker.Abstractions;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// A scoped signing key's permission template applied to one user (nats-server
/// <c>processUserPermissionsTemplate</c>): in each subject of the template's publish and subscribe lists, a token
/// <c>{{name()}}</c>, <c>{{subject()}}</c>, <c>{{account-name()}}</c> or <c>{{account-subject()}}</c> becomes the user's
/// or the account's name or public key, and <c>{{tag(x)}}</c> / <c>{{account-tag(x)}}</c> one subject per value of the
/// user's (account's) tags <c>x:value</c>. A subject that comes out invalid is dropped from allow lists and refuses the
/// user in deny lists; an allow list that had subjects and has none left becomes a deny of <c>&gt;</c>.
/// </summary>
internal static class ScopeTemplate
{
    /// <summary>The template's permissions and limits for <paramref name="user"/>, or null when a deny subject came out invalid.</summary>
    public static UserPermissionLimitsClaim? Apply(UserPermissionLimitsClaim template, UserClaims user, AccountClaims account)
    {
        var result = new UserPermissionLimitsClaim
        {
            Response = template.Response,
            Source = template.Source,
            Times = template.Times,
            Locale = template.Locale,
            Subscriptions = template.Subscriptions,
            Data = template.Data,
            Payload = template.Payload,
            BearerToken = template.BearerToken,
            AllowedConnectionTypes = template.AllowedConnectionTypes,
        };
        if (!TryApply(template.Publish, user, account, out var publish) || !TryApply(template.Subscribe, user, account, out var subscribe))
        {
            return null;
        }

        result.Publish = publish;
        result.Subscribe = subscribe;
        return result;
    }

    private static bool TryApply(PermissionClaim? permission, UserClaims user, AccountClaims account, out PermissionClaim? applied)
    {
        applied = permission;
        if (permission is null)
        {
            return true;
        }

        var allow = Expand(permission.Allow, user, account, failOnInvalid: false);
        var deny = Expand(permission.Deny, user, account, failOnInvalid: true);
        if (deny is null)
        {
            return false;
        }

        if (permission.Allow is { Count: > 0 } && allow is not { Count: > 0 })
        {
            deny = deny is null ? [] : [.. deny];
            if (!deny.Contains(">"))
            {
                deny.Add(">");
            }
        }

        applied = new PermissionClaim { Allow = allow, Deny = deny };
        return true;
    }

    // The list with templates filled in; the list itself when it has none. Null when failOnInvalid and a subject came out invalid.
    private static List<string>? Expand(List<string>? subjects, UserClaims user, AccountClaims account, bool failOnInvalid)
    {
        if (subjects is null || !subjects.Any(s => s.Split('.').Any(IsTemplate)))
        {
            return subjects ?? [];
        }

        var expanded = new List<string>(subjects.Count);
        foreach (var subject in subjects)
        {
            var tokens = subject.Split('.');
            var choices = new List<string>[tokens.Length];
            for (var i = 0; i < tokens.Length; i++)
            {
                choices[i] = IsTemplate(tokens[i]) ? Fill(tokens[i][2..^2].ToLowerInvariant(), user, account) : [tokens[i]];
            }

            foreach (var candidate in Combine(choices))
            {
                if (Subjects.IsValid(Encoding.UTF8.GetBytes(candidate)))
                {
                    expanded.Add(candidate);
                }
                else if (failOnInvalid)
                {
                    return null;
                }
            }
        }

        return expanded;
    }

    private static bool IsTemplate(string token) => token.StartsWith("{{", StringComparison.Ordinal) && token.EndsWith("}}", StringComparison.Ordinal) && token.Length >= 4;

    // The values one template token stands for; an unknown function gives a token that makes the subject invalid.
    private static List<string> Fill(string function, UserClaims user, AccountClaims account)
    {
        switch (function)
        {
            case "name()":
                return [user.Name ?? ""];
            case "subject()":
                return [user.Subject ?? ""];
            case "account-name()":
                return [account.Name ?? ""];
            case "account-subject()":
                return [user.Nats.IssuerAccount ?? ""];
        }

        var accountTag = function.StartsWith("account-tag(", StringComparison.Ordinal);
        if ((accountTag || function.StartsWith("tag(", StringComparison.Ordinal)) && function.EndsWith(')'))
        {
            var name = function[(accountTag ? "account-tag(".Length : "tag(".Length)..^1];
            var prefix = name.ToLowerInvariant() + ":";
            var tags = accountTag ? account.Nats.Tags : user.Nats.Tags;
            var values = (tags ?? []).Where(t => t.StartsWith(prefix, StringComparison.Ordinal)).Select(t => t[prefix.Length..]).ToList();

            // No value: an empty token, which makes the subject invalid.
            return values.Count == 0 ? [""] : values;
        }

        return [" "];
    }

    private static IEnumerable<string> Combine(List<string>[] choices)
    {
        IEnumerable<string> partial = [""];
        for (var i = 0; i < choices.Length; i++)
        {
            var index = i;
            partial = partial.SelectMany(prefix => choices[index].Select(value => index == 0 ? value : prefix + "." + value)).ToList();
        }

        return partial;
    }
}
