using System.Globalization;
using System.Text;
using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Security.Tests;

/// <summary>
/// One user of the permission tables, written once and turned into both our options and nats-server's config text, so
/// both servers run with the same rules. The password is the user name.
/// </summary>
internal sealed record SecurityUser(
    string Name,
    string[]? PubAllow = null,
    string[]? PubDeny = null,
    string[]? SubAllow = null,
    string[]? SubDeny = null,
    int? ResponsesMax = null,
    TimeSpan? ResponsesExpire = null)
{
    public bool HasPermissions => PubAllow is not null || PubDeny is not null || SubAllow is not null || SubDeny is not null || ResponsesMax is not null;

    /// <summary>The CONNECT line of this user (not verbose, headers on, so every reply line is one the test expects).</summary>
    public string Connect => $"CONNECT {{\"user\":\"{Name}\",\"pass\":\"{Name}\",\"verbose\":false,\"headers\":true}}\r\n";
}

/// <summary>The users of a table and the two server configurations made from them.</summary>
internal static class SecurityUsers
{
    public static SecurityUser Admin { get; } = new("admin");

    /// <summary>Adds the users to our options.</summary>
    public static void Apply(BrokerOptions options, IEnumerable<SecurityUser> users)
    {
        foreach (var user in users)
        {
            options.Authorization.Users.Add(new UserOptions
            {
                User = user.Name,
                Password = user.Name,
                Permissions = user.HasPermissions ? new PermissionsOptions
                {
                    Publish = user.PubAllow is null && user.PubDeny is null ? null : new SubjectPermissionOptions { Allow = user.PubAllow ?? [], Deny = user.PubDeny ?? [] },
                    Subscribe = user.SubAllow is null && user.SubDeny is null ? null : new SubjectPermissionOptions { Allow = user.SubAllow ?? [], Deny = user.SubDeny ?? [] },
                    AllowResponses = user.ResponsesMax is null ? null : new ResponsePermissionOptions
                    {
                        MaxMessages = user.ResponsesMax.Value,
                        Expires = user.ResponsesExpire ?? TimeSpan.FromMinutes(2),
                    },
                } : null,
            });
        }
    }

    /// <summary>The same users as nats-server's <c>authorization { users = [...] }</c> block.</summary>
    public static string Conf(IEnumerable<SecurityUser> users)
    {
        var text = new StringBuilder("authorization {\n  users = [\n");
        foreach (var user in users)
        {
            text.Append(CultureInfo.InvariantCulture, $"    {{ user: \"{user.Name}\", password: \"{user.Name}\"");
            if (user.HasPermissions)
            {
                var entries = new List<string>();
                AppendList(entries, "publish", user.PubAllow, user.PubDeny);
                AppendList(entries, "subscribe", user.SubAllow, user.SubDeny);
                if (user.ResponsesMax is { } max)
                {
                    var expires = (user.ResponsesExpire ?? TimeSpan.FromMinutes(2)).TotalMilliseconds;
                    entries.Add(string.Create(CultureInfo.InvariantCulture, $"allow_responses: {{ max: {max}, expires: \"{expires}ms\" }}"));
                }

                text.Append(", permissions: { ").AppendJoin(", ", entries).Append(" }");
            }

            text.Append(" }\n");
        }

        return text.Append("  ]\n}\n").ToString();
    }

    private static void AppendList(List<string> entries, string name, string[]? allow, string[]? deny)
    {
        var lists = new List<string>();
        if (allow is not null)
        {
            lists.Add("allow: [" + string.Join(", ", allow.Select(Quote)) + "]");
        }

        if (deny is not null)
        {
            lists.Add("deny: [" + string.Join(", ", deny.Select(Quote)) + "]");
        }

        if (lists.Count > 0)
        {
            entries.Add(name + ": { " + string.Join(", ", lists) + " }");
        }
    }

    private static string Quote(string subject) => "\"" + subject + "\"";
}
