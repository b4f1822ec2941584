using Broker.Core;
using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// An account's <c>exports</c> and <c>imports</c> (nats-server opts.go <c>parseAccountExports</c>,
/// <c>parseAccountImports</c>, <c>parseExportStreamOrService</c>, <c>parseImportStreamOrService</c>) onto
/// <see cref="AccountOptions.Exports"/> and <see cref="AccountOptions.Imports"/> keys, with nats-server's texts and
/// positions. Stream exports and imports are mapped; service ones are not built yet and stay errors. The checks that
/// need every account (an exporter that exists and allows the import, cycles) run once the whole <c>accounts</c> block
/// is read and are reported at its key, as nats-server reports them.
/// </summary>
/// <param name="reader">Typed reads of the values.</param>
/// <param name="output">Where values and diagnostics go.</param>
internal sealed class ImportsMapper(ConfValueReader reader, ConfMappingBuilder output)
{
    private const string Services = "service exports and imports between accounts";

    /// <summary>Maps an account's <c>exports</c>, keeping what it read in <paramref name="account"/> for <see cref="Check"/>.</summary>
    public void Exports(ConfEntry field, string prefix, AccountOptions account)
    {
        if (field.Value is not ConfArray items)
        {
            output.Error(field.KeyPosition, $"Exports should be an array, got {GoType(field.Value)}");
            return;
        }

        foreach (var item in items.Items)
        {
            if (item is not ConfMap body)
            {
                output.Error(item.Position, $"Export Items should be a map with type entry, got {GoType(item)}");
                continue;
            }

            if (Export(body) is { } export)
            {
                var key = $"{prefix}:{nameof(AccountExportOptions.Streams)}:{Format(account.Exports.Streams.Count)}";
                output.Set(key + ":" + nameof(StreamExportOptions.Subject), export.Subject);
                for (var i = 0; i < (export.Accounts?.Count ?? 0); i++)
                {
                    output.Set($"{key}:{nameof(StreamExportOptions.Accounts)}:{Format(i)}", export.Accounts![i]);
                }

                account.Exports.Streams.Add(export);
            }
        }
    }

    /// <summary>Maps an account's <c>imports</c>, keeping what it read in <paramref name="account"/> for <see cref="Check"/>.</summary>
    public void Imports(ConfEntry field, string prefix, AccountOptions account)
    {
        if (field.Value is not ConfArray items)
        {
            output.Error(field.KeyPosition, $"Imports should be an array, got {GoType(field.Value)}");
            return;
        }

        foreach (var item in items.Items)
        {
            if (item is not ConfMap body)
            {
                output.Error(item.Position, $"Import Items should be a map with type entry, got {GoType(item)}");
                continue;
            }

            if (Import(body) is { } import)
            {
                var key = $"{prefix}:{nameof(AccountImportOptions.Streams)}:{Format(account.Imports.Streams.Count)}";
                output.Set(key + ":" + nameof(StreamImportOptions.Account), import.Account);
                output.Set(key + ":" + nameof(StreamImportOptions.Subject), import.Subject);
                if (import.Prefix is not null)
                {
                    output.Set(key + ":" + nameof(StreamImportOptions.Prefix), import.Prefix);
                }

                if (import.To is not null)
                {
                    output.Set(key + ":" + nameof(StreamImportOptions.To), import.To);
                }
                account.Imports.Streams.Add(import);
            }
        }
    }

    /// <summary>
    /// The checks across accounts, at the <c>accounts</c> key: the broker's own validation of the options, whose texts
    /// are nats-server's.
    /// </summary>
    public void Check(ConfPosition position, IList<AccountOptions> accounts)
    {
        if (!accounts.Any(a => a.Exports.Streams.Count > 0 || a.Imports.Streams.Count > 0))
        {
            return;
        }

        try
        {
            new BrokerOptions { Accounts = accounts }.Validate();
        }
        catch (InvalidOperationException ex)
        {
            output.Error(position, ex.Message);
        }
    }

    private StreamExportOptions? Export(ConfMap body)
    {
        string? stream = null;
        List<string>? accounts = null;
        foreach (var entry in body.Entries)
        {
            switch (entry.Key.ToLowerInvariant())
            {
                case "stream":
                    if (entry.Value is ConfString text)
                    {
                        stream = text.Value;
                    }
                    else
                    {
                        output.Error(entry.KeyPosition, $"Expected stream name to be string, got {GoType(entry.Value)}");
                    }

                    break;
                case "accounts":
                    accounts = Names(entry);
                    break;
                case "service" or "account_token_position":
                    reader.NotYet(entry, Services);
                    break;
                case "response" or "response_type" or "threshold" or "response_threshold" or "response_max_time" or "response_time":
                    output.Error(entry.KeyPosition, "Detected response directive on non-service");
                    break;
                case "latency":
                    output.Error(entry.KeyPosition, "Detected latency directive on non-service");
                    break;
                default:
                    reader.Unknown(entry);
                    break;
            }
        }

        return stream is null ? null : new StreamExportOptions { Subject = stream, Accounts = accounts };
    }

    private List<string>? Names(ConfEntry entry)
    {
        if (entry.Value is not ConfArray names)
        {
            reader.TypeError(entry.KeyPosition, entry.Value, "[]interface {}");
            return null;
        }

        var result = new List<string>();
        foreach (var name in names.Items)
        {
            if (name is not ConfString text)
            {
                reader.TypeError(entry.KeyPosition, name, "string");
                return null;
            }

            result.Add(text.Value);
        }

        return result;
    }

    private StreamImportOptions? Import(ConfMap body)
    {
        StreamImportOptions? stream = null;
        string? prefix = null;
        string? to = null;
        foreach (var entry in body.Entries)
        {
            switch (entry.Key.ToLowerInvariant())
            {
                case "stream":
                    stream = Source(entry);
                    break;
                case "service":
                    reader.NotYet(entry, Services);
                    break;
                case "prefix":
                    if (reader.TryString(entry, out var text))
                    {
                        prefix = text;
                    }

                    break;
                case "to":
                    if (reader.TryString(entry, out var target))
                    {
                        to = target;
                        if (!string.IsNullOrEmpty(prefix))
                        {
                            output.Error(entry.KeyPosition, "Stream import can not have a 'prefix' and a 'to' property");
                            return null;
                        }
                    }

                    break;
                case "share":
                    // A service import's setting; nats-server ignores it on a stream.
                    reader.TryBool(entry, out _);
                    break;
                default:
                    reader.Unknown(entry);
                    break;
            }
        }

        if (stream is null)
        {
            return null;
        }

        // With both (possible when `to` came first), nats-server's import takes the prefix.
        stream.Prefix = string.IsNullOrEmpty(prefix) ? null : prefix;
        stream.To = stream.Prefix is null && !string.IsNullOrEmpty(to) ? to : null;
        return stream;
    }

    // {account: A, subject: "x"} (nats-server parseAccount).
    private StreamImportOptions? Source(ConfEntry entry)
    {
        if (entry.Value is not ConfMap source)
        {
            output.Error(entry.KeyPosition, $"Stream entry should be an account map, got {GoType(entry.Value)}");
            return null;
        }

        string? account = null;
        string? subject = null;
        foreach (var field in source.Entries)
        {
            switch (field.Key.ToLowerInvariant())
            {
                case "account":
                    account = reader.TryString(field, out var name) ? name : null;
                    break;
                case "subject":
                    subject = reader.TryString(field, out var text) ? text : null;
                    break;
                default:
                    reader.Unknown(field);
                    break;
            }
        }

        if (string.IsNullOrEmpty(account) || string.IsNullOrEmpty(subject))
        {
            output.Error(entry.KeyPosition, "Expect an account name and a subject");
            return null;
        }

        return new StreamImportOptions { Account = account, Subject = subject };
    }
}
