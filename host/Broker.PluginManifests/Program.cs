// Usage: dotnet Broker.PluginManifests.dll PLUGIN_FOLDER...
// Writes PLUGIN_FOLDER/<Name>.plugin-manifest for PLUGIN_FOLDER/<Name>.dll (Plugins/PluginManifestFile.cs); removes
// a stale one when the assembly cannot be described (the host then reads its metadata, as for any plugin without one).
using Broker.Host.Plugins;

foreach (var folder in args)
{
    if (!Directory.Exists(folder))
    {
        continue;
    }

    var name = Path.GetFileName(Path.TrimEndingDirectorySeparator(folder));
    var assembly = Path.Combine(folder, name + ".dll");
    var manifest = PluginManifestFile.PathFor(assembly);
    string? text = null;
    try
    {
        if (File.Exists(assembly) && PluginManifestFile.FileKey(assembly) is { } key)
        {
            text = PluginManifestFile.Format(PluginMetadata.Read(assembly), key);
        }
    }
    catch (BadImageFormatException)
    {
    }

    if (text is null)
    {
        File.Delete(manifest);
    }
    else if (!File.Exists(manifest) || File.ReadAllText(manifest) != text)
    {
        File.WriteAllText(manifest, text);
    }
}
