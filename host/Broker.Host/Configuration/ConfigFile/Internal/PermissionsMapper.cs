using Broker.Abstractions;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// Permissions of a user or the default ones (nats-server opts.go parseUserPermissions, parseVariablePermissions,
/// parseAllowResponses, checkPermSubjectArray) onto <see cref="PermissionsOptions"/> keys.
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
internal sealed class PermissionsMapper(ConfValueReader reader, ConfMappingBuilder output)
{
    /// <summary>Maps a permissions block onto the <see cref="PermissionsOptions"/> keys under <paramref name="prefix"/>.</summary>
    public void Map(ConfEntry entry, string prefix)
    {
        if (entry.Value is not ConfMap block)
        {
            output.Error(entry.KeyPosition, $"Expected permissions to be a map/struct, got {entry.Value}");
            return;
        }

        foreach (var item in block.Entries)
        {
            switch (item.Key.ToLowerInvariant())
            {
                case "pub" or "publish" or "import":
                    SubjectPermission(item, prefix + ":" + nameof(PermissionsOptions.Publish), allowQueue: false);
                    break;
                case "sub" or "subscribe" or "export":
                    SubjectPermission(item, prefix + ":" + nameof(PermissionsOptions.Subscribe), allowQueue: true);
                    break;
                case "publish_allow_responses" or "allow_responses":
                    AllowResponses(item, prefix + ":" + nameof(PermissionsOptions.AllowResponses));
                    break;
                default:
                    if (!item.UsedAsVariable)
                    {
                        output.Error(item.KeyPosition, $"Unknown field \"{item.Key}\" parsing permissions");
                    }

                    break;
            }
        }
    }

    // A subject, a list of subjects (both meaning "allow"), or { allow, deny }.
    private void SubjectPermission(ConfEntry entry, string prefix, bool allowQueue)
    {
        if (entry.Value is ConfMap block)
        {
            foreach (var item in block.Entries)
            {
                switch (item.Key.ToLowerInvariant())
                {
                    case "allow":
                        Subjects(item, prefix + ":" + nameof(SubjectPermissionOptions.Allow), allowQueue);
                        break;
                    case "deny":
                        Subjects(item, prefix + ":" + nameof(SubjectPermissionOptions.Deny), allowQueue);
                        break;
                    default:
                        if (!item.UsedAsVariable)
                        {
                            output.Error(item.KeyPosition, $"Unknown field name \"{item.Key}\" parsing subject permissions, only 'allow' or 'deny' are permitted");
                        }

                        break;
                }
            }

            return;
        }

        Subjects(entry, prefix + ":" + nameof(SubjectPermissionOptions.Allow), allowQueue);
    }

    /// <summary>A subject or a list of subjects (nats-server parsePermSubjects), each checked, onto <paramref name="prefix"/>:0, :1, ...</summary>
    public void Subjects(ConfEntry entry, string prefix, bool allowQueue)
    {
        List<string> subjects;
        switch (entry.Value)
        {
            case ConfString text:
                subjects = [text.Value];
                break;
            case ConfArray array:
                subjects = [];
                foreach (var item in array.Items)
                {
                    if (item is not ConfString text)
                    {
                        output.Error(item.Position, "Subject in permissions array cannot be cast to string");
                        return;
                    }

                    subjects.Add(text.Value);
                }

                break;
            default:
                output.Error(entry.KeyPosition, $"Expected subject permissions to be a subject, or array of subjects, got {GoType(entry.Value)}");
                return;
        }

        // An invalid subject is reported at the list's key, as nats-server does.
        for (var i = 0; i < subjects.Count; i++)
        {
            if (InvalidPermissionSubject(subjects[i], allowQueue) is { } reason)
            {
                output.Error(entry.KeyPosition, reason);
                return;
            }

            output.Set(prefix + ":" + Format(i), subjects[i]);
        }
    }

    // nats-server's checkPermSubjectArray; subject validity is the core's rule (a publish permission accepts any valid
    // subject, wildcards included).
    private static string? InvalidPermissionSubject(string subject, bool allowQueue)
    {
        if (IsValidSubject(subject))
        {
            return null;
        }

        if (!allowQueue)
        {
            return $"subject \"{subject}\" is not a valid subject";
        }

        var parts = subject.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
        if (parts.Length != 2)
        {
            return $"subject \"{subject}\" is not a valid subject";
        }

        if (!IsValidSubject(parts[0]))
        {
            return $"subject \"{parts[0]}\" is not a valid subject";
        }

        return IsValidSubject(parts[1]) ? null : $"queue \"{parts[1]}\" is not a valid queue";
    }

    private static bool IsValidSubject(string subject)
    {
        try
        {
            new PermissionsOptions { Publish = new SubjectPermissionOptions { Allow = [subject] } }.Validate();
            return true;
        }
        catch (InvalidOperationException)
        {
            return false;
        }
    }

    // true, false, or { max, expires }. nats-server reads max 0 and expires 0 as its defaults (1 message, 2 minutes)
    // and negative values as unlimited; ResponsePermissionOptions reads anything <= 0 as unlimited, so 0 becomes the
    // default here and negatives pass through.
    private void AllowResponses(ConfEntry entry, string prefix)
    {
        var defaults = new ResponsePermissionOptions();
        var max = defaults.MaxMessages;
        var expires = defaults.Expires;
        switch (entry.Value)
        {
            case ConfBool { Value: false }:
                return;
            case ConfBool:
                break;
            case ConfMap block:
                foreach (var item in block.Entries)
                {
                    switch (item.Key.ToLowerInvariant())
                    {
                        case "max" or "max_msgs" or "max_messages" or "max_responses":
                            if (!reader.TryInt32(item, out var value))
                            {
                                return;
                            }

                            max = value == 0 ? max : value;
                            break;
                        case "expires" or "expiration" or "ttl":
                            if (item.Value is not ConfString text)
                            {
                                output.Error(item.KeyPosition, "error parsing expires, not a duration string");
                                return;
                            }

                            if (!ConfigSyntax.TryParseDuration(text.Value, out var ttl, out var error))
                            {
                                output.Error(item.KeyPosition, $"error parsing expires: {error}");
                                return;
                            }

                            expires = ttl == TimeSpan.Zero ? expires : ttl;
                            break;
                        default:
                            if (!item.UsedAsVariable)
                            {
                                output.Error(item.KeyPosition, $"Unknown field \"{item.Key}\" parsing permissions");
                            }

                            break;
                    }
                }

                break;
            default:
                output.Error(entry.KeyPosition, "error parsing response permissions, expected a boolean or a map");
                return;
        }

        output.Set(prefix + ":" + nameof(ResponsePermissionOptions.MaxMessages), Format(max));
        output.Set(prefix + ":" + nameof(ResponsePermissionOptions.Expires), Format(expires));
    }
}
